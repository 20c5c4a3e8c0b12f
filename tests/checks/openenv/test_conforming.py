"""Conforming openenv-core servers (and the hand-made control server) pass with no fail and no error."""

from __future__ import annotations

import pytest

from checks.core import Verdict
from checks.registry import get_suite
from tests.checks.openenv import envs
from tests.checks.openenv.helpers import check, verdict_of, verdicts
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv.handmade import Quirks, build_app


def big_integer_rewarded_app():
    """Legal but unusual: 1 MiB of feedback in every step observation, and rewards sent as 1 and 0."""
    return build_app(Quirks(integer_rewards=True, feedback_padding=1024 * 1024))


def mcp_app():
    """A hand-made server whose POST /mcp answers bad bodies as JSON-RPC 2.0 requires."""
    return build_app(Quirks(mcp="jsonrpc"))


PEERS = {
    "quiz, concurrent and seeded": (envs.quiz_app, envs.QUIZ_OPTIONS),
    "the seed's scenario": (envs.quiz_app, envs.SEED_OPTIONS),
    "echo, one session": (envs.echo_app, envs.ECHO_OPTIONS),
    "walk, multi-step episodes": (envs.walk_app, envs.WALK_OPTIONS),
    "hand-made control server": (build_app, envs.QUIZ_OPTIONS),
    "hand-made, 1 MiB observations and integer rewards": (big_integer_rewarded_app, envs.QUIZ_OPTIONS),
    "production mode (no HTTP /reset, /step, /state)": (envs.production_quiz_app, envs.QUIZ_OPTIONS),
    "nested action models, generated actions": (envs.move_app, envs.MOVE_OPTIONS),
    "slow steps served concurrently": (envs.slow_quiz_app, envs.QUIZ_OPTIONS),
    "optional action members of every kind": (envs.form_app, envs.FORM_OPTIONS),
    "hand-made with a JSON-RPC /mcp": (mcp_app, envs.QUIZ_OPTIONS),
    "hand-made with the task API": (lambda: build_app(Quirks(tasks="consistent")), envs.QUIZ_OPTIONS),
}


# The server runs in a thread of the test's own process, so 1 MiB observations are encoded under the checker's
# GIL: on a loaded machine a step passes the overlap phase's 20 ms floor and the group looks served in turn.
# Overlap is proven on "slow steps served concurrently"; here it would measure the test, not the server.
WITHOUT_OVERLAP = {"hand-made, 1 MiB observations and integer rewards"}


def default_phases_for(name: str) -> list[str] | None:
    if name not in WITHOUT_OVERLAP:
        return None
    return [phase.name for phase in get_suite("openenv").phases if phase.default and phase.name != "overlap"]


@pytest.mark.parametrize("name", list(PEERS))
async def test_conforming_server_passes(name):
    make_app, options = PEERS[name]
    with serve_in_thread(make_app()) as url:
        report = await check(url, options, default_phases_for(name))
    assert verdicts(report, Verdict.FAIL, Verdict.ERROR, Verdict.WARN) == {}
    assert report.outcome() == "pass"
    assert verdict_of(report, "openenv.latency.figures") is Verdict.INFO
    assert verdict_of(report, "openenv.ws.envelope") is Verdict.PASS
    assert verdict_of(report, "openenv.ws.reply-in-time") is Verdict.PASS


async def test_seed_scenario_scores_half_in_a_group_of_five_and_refuses_the_odd_actions():
    with serve_in_thread(envs.quiz_app()) as url:
        report = await check(url, envs.SEED_OPTIONS)
    group = [r for r in report.results.values() if r.phase == "group"]
    assert {r.clause_id: r.verdict for r in group} == {
        "openenv.determinism.sequential": Verdict.PASS,
        "openenv.replay.expected-reward": Verdict.PASS,
        "openenv.determinism.group": Verdict.PASS,
        "openenv.isolation.sessions": Verdict.PASS,
        "openenv.ws.reward": Verdict.PASS,  # every reward the group saw is judged
        "openenv.ws.reward-number": Verdict.PASS,
        "openenv.ws.reward-range": Verdict.INFO,  # no range declared: the range seen is recorded
        "openenv.ws.reply-in-time": Verdict.PASS,
    }
    expected_reward = report.results[("group", "openenv.replay.expected-reward")]
    assert expected_reward.checks == 2 + 5  # two solo runs and the five sessions of the group
    rejected = report.results[("actions", "openenv.action.rejected")]
    assert rejected.checks == 4  # {}, stray keys, a non-string answer, a null answer
    assert "0.5" in report.results[("group", "openenv.determinism.group")].actual


async def test_single_session_server_reports_its_capacity_of_one():
    with serve_in_thread(envs.echo_app()) as url:
        report = await check(url, envs.ECHO_OPTIONS, ["capacity", "close"])
    probed = report.results[("capacity", "openenv.capacity.probed")]
    assert probed.actual.startswith("1 concurrent sessions accepted")
    assert report.results[("capacity", "openenv.capacity.reached")].verdict is Verdict.PASS
    assert report.results[("close", "openenv.close.frees-slot")].verdict is Verdict.PASS


async def test_a_group_larger_than_capacity_fails_the_group_clause_only():
    with serve_in_thread(envs.echo_app()) as url:
        report = await check(url, {**envs.ECHO_OPTIONS, "group_size": 3})
    assert set(verdicts(report, Verdict.FAIL)) == {"openenv.capacity.group"}


async def test_latency_bound_is_judged_when_the_target_sets_one():
    with serve_in_thread(envs.quiz_app()) as url:
        generous = await check(url, {**envs.QUIZ_OPTIONS, "latency_bound_ms": 60_000}, ["latency"])
        impossible = await check(url, {**envs.QUIZ_OPTIONS, "latency_bound_ms": 1e-6}, ["latency"])
    assert generous.results[("latency", "openenv.latency.bound")].verdict is Verdict.PASS
    assert impossible.results[("latency", "openenv.latency.bound")].verdict is Verdict.FAIL


async def test_every_result_of_a_phase_that_talked_to_the_target_names_its_transcript():
    with serve_in_thread(envs.quiz_app()) as url:
        report = await check(url, envs.QUIZ_OPTIONS)
    for result in report.results.values():
        if result.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.INFO):
            assert result.transcript_ids, result.clause_id
            assert all(report.transcripts[t].frames for t in result.transcript_ids), result.clause_id


async def test_slow_steps_served_concurrently_are_judged_to_overlap():
    with serve_in_thread(envs.slow_quiz_app()) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["overlap"])
    overlap = report.results[("overlap", "openenv.concurrency.overlap")]
    assert overlap.verdict is Verdict.PASS, overlap.actual
    assert "one step alone" in overlap.actual


async def test_quick_steps_are_not_judged_for_overlap():
    with serve_in_thread(envs.quiz_app()) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["overlap"])
    overlap = report.results[("overlap", "openenv.concurrency.overlap")]
    assert overlap.verdict is Verdict.INFO
    assert overlap.actual.startswith("not judged, because one step takes")


async def test_a_group_beyond_capacity_is_not_judged_for_overlap():
    with serve_in_thread(envs.slow_quiz_app()) as url:
        report = await check(url, {**envs.QUIZ_OPTIONS, "group_size": 9}, ["overlap"])
    overlap = report.results[("overlap", "openenv.concurrency.overlap")]
    assert overlap.verdict is Verdict.INFO
    assert overlap.actual.startswith("not judged, because the group was not accepted")


async def test_every_advertised_action_property_is_sent_once_and_accepted():
    with serve_in_thread(envs.form_app()) as url:
        report = await check(url, envs.FORM_OPTIONS, ["actions"])
    accepted = report.results[("actions", "openenv.schema.action-accepted")]
    assert accepted.verdict is Verdict.PASS, accepted.actual
    properties = envs.FormAction.model_json_schema()["properties"]
    assert accepted.checks == 1 + len(properties)  # the generated action, then one per property
    sent = " ".join(t.label for t in report.transcripts.values())
    assert all(f"property {name!r}" in sent for name in properties)


async def test_a_server_without_mcp_is_unsupported_not_failed():
    with serve_in_thread(build_app()) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["mcp"])
    for clause_id in ("openenv.mcp.error-object", "openenv.mcp.error-code"):
        assert report.results[("mcp", clause_id)].verdict is Verdict.UNSUPPORTED
