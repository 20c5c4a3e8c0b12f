"""A reference server's command line: start it, say where it listens, serve until Ctrl-C or until it stops."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar


class Running(Protocol):
    """A started reference server: where it listens, and how to stop it."""

    @property
    def url(self) -> str: ...

    async def close(self) -> None: ...


RunningT = TypeVar("RunningT", bound=Running)


def serve_until_interrupted(
    start: Callable[[], Awaitable[RunningT]],
    says: Callable[[str], str],
    until: Callable[[RunningT], Awaitable[Any]] | None = None,
) -> int:
    """Start the server, print `says(url)`, serve until Ctrl-C (or until `until(server)` returns: a server
    that can be told to stop), close it; exit code 0."""

    async def run() -> None:
        running = await start()
        print(says(running.url), flush=True)
        try:
            await (asyncio.Event().wait() if until is None else until(running))
        finally:
            await running.close()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())
    return 0
