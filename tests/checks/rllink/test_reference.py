"""The suite passes the reference server in both dialects, all phases, auto-detecting the dialect."""

from __future__ import annotations

import asyncio

import pytest

from checks.core import Outcome, Verdict, run_suite
from checks.rllink.conforming import QUICK_OPTIONS
from checks.rllink.reference import start_reference_server
from checks.rllink.suite import SUITE

FAST = dict(QUICK_OPTIONS)  # the conforming runs' short waits


@pytest.mark.parametrize("dialect", ["msgpack", "json"])
async def test_reference_passes_every_phase(dialect):
    server = await start_reference_server("127.0.0.1", 0, dialect=dialect, fragment_length=32, recycle=0.1)
    try:
        report = await run_suite(SUITE, server.url, FAST, include_optional=True)
    finally:
        await server.close()
    bad = [r for r in report.results.values() if r.verdict not in (Verdict.PASS, Verdict.INFO)]
    assert not bad, [(r.clause_id, r.verdict, r.actual) for r in bad]
    assert report.outcome() is Outcome.PASS


async def test_a_pong_within_the_back_off_ends_the_wait():
    # A 20 s back-off over ten malformed frames would take 200 s; the reference listens again after 0.1 s.
    server = await start_reference_server("127.0.0.1", 0, dialect="msgpack", fragment_length=32, recycle=0.1)
    try:
        report = await asyncio.wait_for(
            run_suite(SUITE, server.url, {**FAST, "recycle_wait": 20.0}, phases=["handshake", "malformed"]), 30.0
        )
    finally:
        await server.close()
    recovery = report.results[("malformed", "rllink.malformed.recovery")]
    assert recovery.verdict is Verdict.PASS, recovery.actual
    assert recovery.checks == 10
