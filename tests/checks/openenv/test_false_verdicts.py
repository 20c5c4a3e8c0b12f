"""Servers that conform, judged falsely before (issue 19): each test here failed before its fix."""

from __future__ import annotations

import time
from typing import Any

from openenv.core.env_server.http_server import create_fastapi_app

from checks.core import Verdict
from tests.checks.openenv import envs
from tests.checks.openenv.helpers import check, verdict_of, verdicts
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv import never_done
from tests.zoo.openenv.handmade import Quirks, build_app

QUICK: dict[str, Any] = {"timeout": 5.0, "latency_rounds": 2}


class UnscoredEchoEnv(envs.EchoEnv):
    """Legal: StepResponse.reward is optional, so a step may carry reward null."""

    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        observation.reward = None
        return observation


async def test_a_reset_frame_is_judged_by_the_published_reset_observation():
    with serve_in_thread(build_app(Quirks(own_reset_observation=True))) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["session"])
    result = report.results[("session", "openenv.schema.observation-valid")]
    assert result.verdict is Verdict.PASS, result.actual


async def test_a_seed_is_not_judged_on_an_env_that_shows_no_randomness():
    with serve_in_thread(envs.echo_app()) as url:
        report = await check(url, {**envs.ECHO_OPTIONS, "reset": {"seed": 7}}, ["reset"])
    result = report.results[("reset", "openenv.reset.seed")]
    assert result.verdict is Verdict.INFO, result.actual
    assert result.actual.startswith("not judged")


async def test_an_endless_env_is_not_failed_without_a_declared_limit():
    with serve_in_thread(never_done.make_app()) as url:
        undeclared = await check(url, {**envs.QUIZ_OPTIONS, "expected_reward": None}, ["termination"])
        endless = await check(url, {**envs.QUIZ_OPTIONS, "expected_reward": None, "endless": True}, ["termination"])
    for report in (undeclared, endless):
        result = report.results[("termination", "openenv.termination.within-budget")]
        assert result.verdict is Verdict.INFO, result.actual
        assert result.actual.startswith("not judged")


async def test_one_session_capacity_with_default_options_runs_the_group_within_it():
    with serve_in_thread(envs.echo_app()) as url:
        report = await check(url, QUICK)
    assert verdicts(report, Verdict.FAIL, Verdict.ERROR) == {}
    assert verdict_of(report, "openenv.capacity.reached") is Verdict.PASS
    assert verdict_of(report, "openenv.capacity.group") is Verdict.INFO
    # No seed sent and no determinism declared: two episodes may differ by design, so not judged.
    sequential = report.results[("group", "openenv.determinism.sequential")]
    assert sequential.verdict is Verdict.INFO and sequential.actual.startswith("not judged"), sequential.actual


async def test_a_null_step_reward_is_legal_with_default_options():
    app = create_fastapi_app(UnscoredEchoEnv, envs.EchoAction, envs.EchoObservation)
    with serve_in_thread(app) as url:
        report = await check(url, {**QUICK, "actions": [{"text": "hello"}]}, ["session", "actions"])
    assert verdict_of(report, "openenv.ws.reward") is Verdict.PASS
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}


class SideTakingQuizEnv(envs.QuizEnv):
    """Legal: with no seed sent, each episode takes the other side (as an env drawing one at random may)."""

    episodes = 0

    def reset(self, seed=None, episode_id=None, task_id="t1", **kwargs):
        observation = super().reset(seed, episode_id, task_id, **kwargs)
        type(self).episodes += 1
        observation.prompt = f"{observation.prompt} (you play {'xo'[type(self).episodes % 2]})"
        return observation


async def test_an_env_taking_a_side_per_episode_fails_no_comparison_without_a_seed():
    unseeded = {**envs.QUIZ_OPTIONS, "reset": {"task_id": "t1"}, "reward_range": None, "group_size": 3}
    with serve_in_thread(envs.quiz_app(SideTakingQuizEnv)) as url:
        report = await check(url, unseeded, ["group"])
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}
    for clause_id in ("openenv.determinism.sequential", "openenv.determinism.group", "openenv.isolation.sessions"):
        result = report.results[("group", clause_id)]
        assert result.verdict is Verdict.INFO and result.actual.startswith("not judged"), result.actual
    declared = {**unseeded, "deterministic": True}
    with serve_in_thread(envs.quiz_app(SideTakingQuizEnv)) as url:
        report = await check(url, declared, ["group"])
    assert verdict_of(report, "openenv.determinism.sequential") is Verdict.FAIL


async def test_negative_rewards_are_recorded_not_warned_without_a_declared_range():
    from tests.zoo.openenv import late_out_of_range

    undeclared = {**late_out_of_range.OPTIONS, "reward_range": None, "timeout": 5.0}
    with serve_in_thread(late_out_of_range.make_app()) as url:
        report = await check(url, undeclared, ["termination"])
    result = report.results[("termination", "openenv.ws.reward-range")]
    assert result.verdict is Verdict.INFO and "-1.0" in result.actual, result.actual


class SlowResetEchoEnv(envs.EchoEnv):
    """Legal: a reset takes 2 s (OpenEnv's chess env searches a move when its opponent opens), within the timeout."""

    def reset(self, seed=None, episode_id=None, **kwargs):
        time.sleep(2.0)
        return super().reset(seed, episode_id, **kwargs)


async def test_a_slot_held_by_a_dropped_slow_reset_is_waited_for_within_the_timeout():
    # The dropped reset keeps the one slot until it returns; a fresh session tried only for about 1.5 s
    # met CAPACITY_REACHED each time and openenv.survive.hostile failed a server that frees the slot.
    app = create_fastapi_app(SlowResetEchoEnv, envs.EchoAction, envs.EchoObservation)
    with serve_in_thread(app) as url:
        report = await check(url, {**QUICK, "timeout": 4.0}, ["capacity", "survive"])
    result = report.results[("survive", "openenv.survive.hostile")]
    assert result.verdict is Verdict.PASS, result.actual
