"""Broken rlmesh servers, each flagged with its exact clause and nothing unrelated.

Two kinds: gymnasium envs with bugs served by the real `rlmesh` server
(tests/zoo/rlmesh/envs.py), and faults the package cannot produce, from the
hand-written grpcio server on our own protos (tests/zoo/rlmesh/handmade.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checks.core import Report, Verdict, run_suite
from checks.rlmesh import client
from checks.rlmesh.suite import SUITE
from tests.zoo.rlmesh import handmade as rlmesh_handmade
from tests.zoo.rlmesh.catalogue import ZOO

OPTIONS = {"timeout": 3.0}


def clauses_with(report, verdict: Verdict) -> set[str]:
    return {r.clause_id for r in report.results.values() if r.verdict is verdict}


def not_passed(report: Report) -> dict[str, str]:
    return {
        r.clause_id: r.actual
        for r in report.results.values()
        if r.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    }


async def handmade_report(
    options: dict[str, Any],
    faults: frozenset[str] | set[str] = frozenset(),
    step_delay: float = 0.0,
    include_optional: bool = False,
) -> Report:
    """The suite's report on the hand-made server (two lanes) with `faults`, stopped whatever happens."""
    server, _, address = await rlmesh_handmade.start(lanes=2, faults=faults, step_delay=step_delay)
    try:
        return await run_suite(SUITE, address, options, include_optional=include_optional)
    finally:
        await server.stop(0)


async def test_handmade_server_without_faults_passes_everything():
    report = await handmade_report(OPTIONS, step_delay=0.03, include_optional=True)
    assert not_passed(report) == {}
    assert "rlmesh.l2.lanes-overlap" in clauses_with(report, Verdict.PASS)


@pytest.mark.parametrize("fault", sorted(name for name, entry in ZOO.items() if not entry.served))
async def test_handmade_fault_is_flagged_with_its_clause(fault, monkeypatch):
    expected = ZOO[fault].clause
    if fault == "slot-leak":  # each later phase waits out the slot before giving up: keep that short
        monkeypatch.setattr(client, "JOIN_SLOT_WAIT", 0.3)
    # Lane overlap and step deadlines are judged only when a lane step is slow enough to measure.
    delay = 0.03 if fault in ("serial-lanes", "ignores-timeout", "answers-after-timeout") else 0.0
    options = {**OPTIONS, **ZOO[fault].options}
    report = await handmade_report(options, {fault}, step_delay=delay, include_optional=fault == "never-stops")
    flagged = clauses_with(report, Verdict.FAIL) | clauses_with(report, Verdict.WARN)
    assert flagged == {expected} | ZOO[fault].knock_on, failures(report)
    missed = Verdict.FAIL if SUITE.catalogue[expected].level == "MUST" else Verdict.WARN
    assert expected in clauses_with(report, missed)


@pytest.mark.parametrize("variant", sorted(rlmesh_handmade.VARIANTS))
async def test_legal_but_unusual_server_passes_everything(variant):
    report = await handmade_report(OPTIONS, {variant}, step_delay=0.03)
    assert not_passed(report) == {}
    assert {
        "rlmesh.s2.episode-accounting",
        "rlmesh.s3.autoreset",
        "rlmesh.v3.bad-action-rejected",
        "rlmesh.l1.subset-step",
        "rlmesh.e3.timeout",
    } <= clauses_with(report, Verdict.PASS)


async def test_replies_later_than_the_timeout_fail_within_the_deadlines():
    timeout = rlmesh_handmade.SLOW_REPLY / 2
    report = await asyncio.wait_for(handmade_report({"timeout": timeout}, {"slow-replies"}), 30 * timeout)
    assert clauses_with(report, Verdict.FAIL) == {"rlmesh.s1.answered"}, failures(report)
    answered = next(r for r in report.results.values() if r.clause_id == "rlmesh.s1.answered")
    assert f"no response within {timeout:g}s" in answered.actual and answered.transcript_ids
    assert not any("harness error" in r.actual for r in report.results.values())


async def test_an_oversized_reply_is_not_judged_rather_than_failed():
    limit = rlmesh_handmade.HUGE_REPLY // 2
    report = await handmade_report({**OPTIONS, "max_message_bytes": limit}, {"huge-reply"})
    assert clauses_with(report, Verdict.FAIL) == set(), failures(report)
    unjudged = [r for r in report.results.values() if r.verdict is Verdict.ERROR]
    assert unjudged and all("max_message_bytes" in r.actual for r in unjudged)
    # Everything before the first step is still judged.
    assert {"rlmesh.h1.compatible", "rlmesh.h1.spaces"} <= clauses_with(report, Verdict.PASS)


@pytest.mark.parametrize("name", sorted(name for name, entry in ZOO.items() if entry.served))
async def test_broken_env_on_the_real_server_is_flagged(name, serve_env):
    expected, consequences = ZOO[name].clause, ZOO[name].knock_on
    served = serve_env(ZOO[name].start, step_delay=0)
    report = await run_suite(SUITE, served.address, OPTIONS)
    flagged = next(
        r for r in report.results.values() if r.clause_id == expected and r.verdict in (Verdict.FAIL, Verdict.WARN)
    )
    assert flagged.verdict is (Verdict.FAIL if SUITE.catalogue[expected].level == "MUST" else Verdict.WARN)
    assert flagged.actual and flagged.transcript_ids
    assert clauses_with(report, Verdict.FAIL) - {expected} <= consequences


def failures(report) -> dict[str, str]:
    return {r.clause_id: r.actual for r in report.results.values() if r.verdict in (Verdict.FAIL, Verdict.WARN)}


async def test_an_episode_past_its_declared_limit_is_a_warning_with_the_steps_taken(serve_env):
    served = serve_env("never-ends", step_delay=0)
    report = await run_suite(SUITE, served.address, OPTIONS, phases=["episodes"])
    limit = next(r for r in report.results.values() if r.clause_id == "rlmesh.s2.step-limit")
    assert limit.verdict is Verdict.WARN
    assert "max_episode_steps = 8" in limit.expected
    assert "lane 0 episode" in limit.actual and "has taken 9 steps" in limit.actual and limit.transcript_ids
    # Bounded by the step budget: a budget that cannot go past the limit does not judge it.
    report = await run_suite(SUITE, served.address, {**OPTIONS, "step_budget": 8}, phases=["episodes"])
    limit = next(r for r in report.results.values() if r.clause_id == "rlmesh.s2.step-limit")
    assert limit.verdict is Verdict.INFO and limit.actual.startswith("not judged, because the step budget of 8")
