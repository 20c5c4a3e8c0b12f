"""Run the rllink-client suite on 127.0.0.1 (port 0) against in-process clients."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import pytest

from checks.core import Report
from checks.rllink_client.conforming import QUICK_OPTIONS
from checks.rllink_client.reference import ReferenceClient
from checks.rllink_client.suite import SUITE
from tests.checks.client_kinds import grade_listening


async def grade(
    client: type[ReferenceClient] | None,
    phases: list[str] | None = None,
    dialect: str = "json",
    **options: Any,
) -> Report:
    """Run the suite and, once it announces its URL, the client against it."""

    def start(url: str) -> Coroutine[Any, Any, Any]:
        assert client is not None
        return client(url, dialect, retry_for=2.0).run()  # type: ignore[arg-type]

    return await grade_listening(
        SUITE, {**QUICK_OPTIONS, **options}, phases, None if client is None else start, timeout=60
    )


Grade = Callable[..., Awaitable[Report]]


@pytest.fixture
def grade_client() -> Grade:
    return grade
