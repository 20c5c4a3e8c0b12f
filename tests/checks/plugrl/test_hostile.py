"""Hostile servers get a verdict, within the deadlines, with bounded memory and no harness error."""

from __future__ import annotations

import asyncio
import resource

import pytest

from checks.core import Outcome, Verdict
from checks.plugrl.suite import SUITE
from tests.zoo.plugrl_hostile import HOSTILE

TIMEOUT = 1.0
RSS_GROWTH_LIMIT_MB = 300  # a bound on the checker, not a speed target

# The clause each attack must be reported under, and the verdicts allowed for it.
EXPECTED = {
    "huge-frame": ("plugrl.5.1.speaks-first", {Verdict.ERROR}),  # over the frame cap: the checker cannot decide
    "endless-frames": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "endless-pings": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "one-byte-at-a-time": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
    "nesting-bomb": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "bin32-4gib": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "shape-bomb": ("plugrl.3.2.ndarray-form", {Verdict.FAIL}),
    "ten-million-keys": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "fifty-mb-string": ("plugrl.2.msgpack-map", {Verdict.FAIL}),
    "random-bytes": ("plugrl.5.1.speaks-first", {Verdict.FAIL, Verdict.ERROR}),
    "reset-mid-frame": ("plugrl.5.1.speaks-first", {Verdict.FAIL}),
}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def test_every_hostile_server_has_an_expectation():
    assert set(EXPECTED) == set(HOSTILE)


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_hostile_server_gets_a_verdict_with_bounded_memory(name, tcp_server_factory, run_check):
    url = await tcp_server_factory(HOSTILE[name])
    before = peak_rss_mb()
    deadline = SUITE.phase("exchange").budget * TIMEOUT + 1
    report = await asyncio.wait_for(run_check(url, phases=["exchange"], timeout=TIMEOUT), timeout=deadline + 5)
    growth = peak_rss_mb() - before

    clause, allowed = EXPECTED[name]
    result = report.results[("exchange", clause)]
    assert result.verdict in allowed, result.to_dict()
    assert report.outcome() in (Outcome.FAIL, Outcome.ERROR)
    assert not [r for r in report.results.values() if "harness error" in r.actual]
    assert all(len(r.actual) <= 700 for r in report.results.values())
    assert growth < RSS_GROWTH_LIMIT_MB, f"peak RSS grew by {growth:.0f} MB"
