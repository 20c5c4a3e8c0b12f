"""Run the plugrl-client suite on 127.0.0.1 (port 0) against in-process clients."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from checks.core import Report
from checks.plugrl_client.conforming import QUICK_OPTIONS, RESTART_DELAY
from checks.plugrl_client.reference import ReferenceClient, run_sessions
from checks.plugrl_client.suite import SUITE
from tests.checks.client_kinds import grade_listening


async def grade(
    client: Callable[[str], ReferenceClient] | None,
    phases: list[str] | None = None,
    sessions: int = 6,
    **options: Any,
) -> Report:
    """Run the suite and, once it announces its URL, the client's sessions against it."""

    def start(url: str) -> Coroutine[Any, Any, Any]:
        assert client is not None
        return run_sessions(client, url, sessions, RESTART_DELAY)

    return await grade_listening(
        SUITE, {**QUICK_OPTIONS, **options}, phases, None if client is None else start, timeout=90
    )


Grade = Callable[..., Awaitable[Report]]


@pytest.fixture
def grade_client() -> Grade:
    return grade
