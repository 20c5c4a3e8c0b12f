"""Run the rllink-client suite on 127.0.0.1 (port 0) against in-process clients."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from checks.core import ListenPolicy, NullSink, Report, run_suite
from checks.rllink_client.reference import ReferenceClient
from checks.rllink_client.suite import SUITE

# Short waits keep the tests fast.
QUICK_OPTIONS: dict[str, Any] = {
    "timeout": 2.0,
    "connect_deadline": 5.0,
    "reply_delay": 0.1,
    "recycle": 0.4,
    "reconnect_window": 3.0,
    "fragment_length": 20,
}


class Announcements(NullSink):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def announce(self, url: str, message: str) -> None:
        self.queue.put_nowait((url, message))


async def grade(
    client: type[ReferenceClient] | None,
    phases: list[str] | None = None,
    dialect: str = "json",
    **options: Any,
) -> Report:
    """Run the suite and, once it announces its URL, the client against it."""
    sink = Announcements()
    run = asyncio.create_task(
        run_suite(SUITE, "", {**QUICK_OPTIONS, **options}, phases, sink, listen=ListenPolicy("127.0.0.1", (0,)))
    )
    url, _ = await asyncio.wait_for(sink.queue.get(), timeout=5)
    task = None
    if client is not None:
        task = asyncio.create_task(client(url, dialect, retry_for=2.0).run())  # type: ignore[arg-type]
    try:
        return await asyncio.wait_for(run, timeout=60)
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


Grade = Callable[..., Awaitable[Report]]


@pytest.fixture
def grade_client() -> Grade:
    return grade
