"""Every broken client of the zoo fails the plugrl-client suite on its own clause; the reference passes."""

from __future__ import annotations

import pytest

from checks.core import Outcome
from checks.plugrl_client.reference import ReferenceClient
from tests.checks.client_kinds import assert_fails_its_clause, assert_no_client_is_an_error, assert_passes
from tests.checks.plugrl_client.conftest import Grade
from tests.zoo.plugrl_client.catalogue import ZOO


def test_zoo_is_big_enough() -> None:
    assert len(ZOO) >= 12


async def test_reference_client_passes(grade_client: Grade) -> None:
    passed = assert_passes(await grade_client(ReferenceClient))
    assert "plugrl-client.10.1.reuse-used" in passed


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_client_fails_its_clause(grade_client: Grade, name: str) -> None:
    entry = ZOO[name]
    report = await grade_client(entry.start, phases=list(entry.phases or ()), sessions=entry.sessions)
    assert_fails_its_clause(report, entry.clause, entry.verdict)


async def test_no_client_is_an_error(grade_client: Grade) -> None:
    assert_no_client_is_an_error(await grade_client(None, connect_deadline=0.3))


async def test_refused_source_never_reaches_a_phase() -> None:
    """The network policy applies to the client's source address: a refused client is never graded."""
    import asyncio

    from checks.core import ListenPolicy, run_suite
    from checks.plugrl_client.reference import run_sessions
    from checks.plugrl_client.suite import SUITE
    from tests.checks.client_kinds import Announcements
    from tests.checks.plugrl_client.conftest import QUICK_OPTIONS

    sink = Announcements()
    policy = ListenPolicy("127.0.0.1", (0,), allow=lambda peer: peer != "127.0.0.1")
    options = {**QUICK_OPTIONS, "connect_deadline": 1.5}
    run = asyncio.create_task(run_suite(SUITE, "", options, ["basic"], sink, listen=policy))
    url, _ = await asyncio.wait_for(sink.queue.get(), timeout=5)
    assert await run_sessions(ReferenceClient, url, 1, 0.1) == 1  # refused at the handshake
    report = await run
    assert report.outcome() is Outcome.ERROR
