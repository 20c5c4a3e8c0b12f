"""Run the plugrl-client suite on 127.0.0.1 (port 0) against in-process clients."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from checks.core import ListenPolicy, NullSink, Report, run_suite
from checks.plugrl_client.reference import ReferenceClient, run_sessions
from checks.plugrl_client.suite import SUITE

# Short waits keep the tests fast; the restart delay must exceed the reconnect window.
QUICK_OPTIONS: dict[str, Any] = {"timeout": 3.0, "connect_deadline": 5.0, "reconnect_window": 0.4, "steps": 8}
RESTART_DELAY = 0.6


class Announcements(NullSink):
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()

    def announce(self, url: str, message: str) -> None:
        self.queue.put_nowait((url, message))


async def grade(
    client: Callable[[str], ReferenceClient] | None,
    phases: list[str] | None = None,
    sessions: int = 6,
    **options: Any,
) -> Report:
    """Run the suite and, once it announces its URL, the client's sessions against it."""
    sink = Announcements()
    run = asyncio.create_task(
        run_suite(SUITE, "", {**QUICK_OPTIONS, **options}, phases, sink, listen=ListenPolicy("127.0.0.1", (0,)))
    )
    url, _ = await asyncio.wait_for(sink.queue.get(), timeout=5)
    clients = None
    if client is not None:
        clients = asyncio.create_task(run_sessions(client, url, sessions, RESTART_DELAY))
    try:
        return await asyncio.wait_for(run, timeout=90)
    finally:
        if clients is not None:
            clients.cancel()
            await asyncio.gather(clients, return_exceptions=True)


Grade = Callable[..., Awaitable[Report]]


@pytest.fixture
def grade_client() -> Grade:
    return grade
