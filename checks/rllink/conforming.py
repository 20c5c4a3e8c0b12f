"""The conforming runs of rllink: the reference server in each dialect, with short fragments and a quick recycle."""

from __future__ import annotations

from typing import Any

from checks.conforming import ServerRun

# Short waits: a local reference server answers in milliseconds.
QUICK_OPTIONS: dict[str, Any] = {
    "timeout": 2.0,
    "recycle_wait": 0.3,
    "quiet": 0.15,
    "second_client_wait": 0.5,
    "batches": 2,
}

RUNS = tuple(
    ServerRun(
        name=dialect,
        start="checks.rllink.reference:start_reference_server",
        start_args={"dialect": dialect, "fragment_length": 32, "recycle": 0.1},
        options=QUICK_OPTIONS,
        include_optional=True,
    )
    for dialect in ("msgpack", "json")
)
