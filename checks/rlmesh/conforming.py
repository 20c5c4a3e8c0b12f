"""The conforming run of rlmesh: the walk server with Shutdown allowed, stopped when it accepts one."""

from __future__ import annotations

import asyncio
from typing import Any

from checks.conforming import ServerRun

# A latency bound, so that step latency is judged.
QUICK_OPTIONS: dict[str, Any] = {"timeout": 3.0, "latency_bound_ms": 1000}


class StopsWhenAsked:
    """A walk server that closes itself once it accepts a Shutdown, as `rlconform reference-server rlmesh` does."""

    def __init__(self, served: Any) -> None:
        self.served, self.url = served, served.url
        self._watch = asyncio.create_task(self._close_when_stopped())

    async def _close_when_stopped(self) -> None:
        await self.served.service.stopped.wait()
        await self.served.close()

    async def close(self) -> None:
        self._watch.cancel()
        await self.served.close()


async def start_stopping_on_shutdown(host: str = "127.0.0.1", port: int = 0) -> StopsWhenAsked:
    from checks.rlmesh.reference import start_reference_server

    return StopsWhenAsked(await start_reference_server(host, port, allow_shutdown=True))


RUNS = (
    ServerRun(
        name="reference",
        start="checks.rlmesh.conforming:start_stopping_on_shutdown",
        options=QUICK_OPTIONS,
        include_optional=True,
    ),
)
