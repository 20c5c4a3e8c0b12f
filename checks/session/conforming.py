"""The conforming run of session-server: the reference server with the v2 tree and a backend that answers at once."""

from __future__ import annotations

from checks.conforming import ServerRun

RUNS = (
    ServerRun(
        name="reference",
        start="checks.session.reference:start_reference_server",
        start_args={"tree": "v2", "backend_delay": 0},
        options={"timeout": 5},
    ),
)
