"""Running a tap in-process between a test's client and server, on free loopback ports."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from checks.tap.ledger import Ledger, Rollover
from checks.tap.run import TapRun, TapSpec
from checks.verdicts import Verdict


@dataclass
class Tapped:
    """A running tap: `url` is where the client connects; `windows` fill in once it stopped."""

    run: TapRun
    url: str
    windows: list[Ledger] = field(default_factory=list)

    @property
    def ledger(self) -> Ledger:
        return self.windows[-1]

    def verdicts(self) -> dict[str, Verdict]:
        return {clause_id: verdict for clause_id, verdict in self.ledger.verdicts() if verdict is not Verdict.SKIP}

    def flagged(self) -> set[str]:
        return {clause for clause, verdict in self.verdicts().items() if verdict in (Verdict.FAIL, Verdict.WARN)}


@asynccontextmanager
async def tapping(spec: TapSpec, upstream: str, scheme: str = "ws", **kwargs: Any) -> AsyncIterator[Tapped]:
    run = TapRun(spec, upstream, **kwargs)
    port = await run.start("127.0.0.1", 0)
    path = upstream.split("//", 1)[1].partition("/")[2]
    tapped = Tapped(run, f"{scheme}://127.0.0.1:{port}/{path}".rstrip("/"))
    try:
        yield tapped
    finally:
        tapped.windows = await run.stop()


async def driven_through_the_tap(spec: TapSpec, running: Any, drive: Callable[[str], Awaitable[Any]]) -> Tapped:
    """`drive(url)` (a suite run, as the client) through a tap in front of `running`, an HTTP server with `url`
    and `close()`; the server is closed after, whatever happens."""
    try:
        async with tapping(spec, running.url, "http") as tapped:
            await drive(tapped.url)
    finally:
        await running.close()
    return tapped


@pytest.fixture
def tap_factory() -> Callable[..., Any]:
    return tapping


Rolling = Rollover
Start = Callable[..., Awaitable[Any]]
