"""Broken rlmesh servers, each flagged with its exact clause and nothing unrelated.

Two kinds: gymnasium envs with bugs served by the real `rlmesh` server
(tests/zoo/rlmesh_envs.py), and faults the package cannot produce, from the
hand-written grpcio server on our own protos (tests/zoo/rlmesh_handmade.py).
"""

from __future__ import annotations

import pytest

from checks.core import Verdict, run_suite
from checks.rlmesh.suite import SUITE
from tests.zoo import rlmesh_handmade

OPTIONS = {"timeout": 3.0}


def clauses_with(report, verdict: Verdict) -> set[str]:
    return {r.clause_id for r in report.results.values() if r.verdict is verdict}


async def test_handmade_server_without_faults_passes_everything():
    server, _, address = await rlmesh_handmade.start(lanes=2, step_delay=0.03)
    try:
        report = await run_suite(SUITE, address, OPTIONS, include_optional=True)
    finally:
        await server.stop(0)
    bad = {r.clause_id: r.actual for r in report.results.values()
           if r.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)}
    assert bad == {}
    assert "rlmesh.l2.lanes-overlap" in clauses_with(report, Verdict.PASS)


@pytest.mark.parametrize("fault", sorted(rlmesh_handmade.FAULTS))
async def test_handmade_fault_is_flagged_with_its_clause(fault):
    expected = rlmesh_handmade.FAULTS[fault]
    # Lane overlap is judged only when a lane step is slow enough to measure.
    delay = 0.03 if fault == "serial-lanes" else 0.0
    server, _, address = await rlmesh_handmade.start(lanes=2, faults={fault}, step_delay=delay)
    try:
        report = await run_suite(SUITE, address, OPTIONS, include_optional=fault == "never-stops")
    finally:
        await server.stop(0)
    assert clauses_with(report, Verdict.FAIL) == {expected}, failures(report)
    assert clauses_with(report, Verdict.WARN) == set()


# env name -> (the clause it must fail or warn, failures that follow from the same bug)
SERVED_ZOO = {
    "obs-out-of-bounds": ("rlmesh.v2.obs-in-space", set()),
    "nan-reward": ("rlmesh.s1.reward-finite", set()),
    "ignores-seed": ("rlmesh.s4.seeded-replay", {"rlmesh.s4.seed-all-lanes", "rlmesh.l1.partial-reset"}),
    "info-not-a-map": ("rlmesh.s1.answered", set()),
    "nan-observation": ("rlmesh.s1.answered", set()),
    "render-raises": ("rlmesh.r1.render", set()),
    "undeclared-render-mode": ("rlmesh.h1.render-mode-declared", set()),
}


@pytest.mark.parametrize("name", sorted(SERVED_ZOO))
async def test_broken_env_on_the_real_server_is_flagged(name, serve_env):
    expected, consequences = SERVED_ZOO[name]
    served = serve_env(name, step_delay=0)
    report = await run_suite(SUITE, served.address, OPTIONS)
    flagged = next(r for r in report.results.values() if r.clause_id == expected
                   and r.verdict in (Verdict.FAIL, Verdict.WARN))
    assert flagged.verdict is (Verdict.FAIL if SUITE.catalogue[expected].level == "MUST" else Verdict.WARN)
    assert flagged.actual and flagged.transcript_ids
    assert clauses_with(report, Verdict.FAIL) - {expected} <= consequences


def failures(report) -> dict[str, str]:
    return {r.clause_id: r.actual for r in report.results.values() if r.verdict is Verdict.FAIL}
