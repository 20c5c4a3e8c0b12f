"""The conforming runs of rllink-client: the reference client in each dialect, graded by a listening run."""

from __future__ import annotations

from typing import Any

from checks.conforming import ClientRun
from checks.rllink.codec import Dialect

# Short waits keep the runs quick.
QUICK_OPTIONS: dict[str, Any] = {
    "timeout": 2.0,
    "connect_deadline": 5.0,
    "reply_delay": 0.1,
    "recycle": 0.4,
    "reconnect_window": 3.0,
    "fragment_length": 20,
}
RETRY_FOR = 2.0  # seconds the client retries connecting, while the run starts listening


async def drive(url: str, dialect: Dialect = "json") -> None:
    """The reference client against the listening run at `url`, speaking `dialect`."""
    from checks.rllink_client.reference import ReferenceClient

    await ReferenceClient(url, dialect, retry_for=RETRY_FOR).run()


RUNS = tuple(
    ClientRun(
        name=dialect,
        drive="checks.rllink_client.conforming:drive",
        options=QUICK_OPTIONS,
        drive_args={"dialect": dialect},
    )
    for dialect in ("msgpack", "json")
)
