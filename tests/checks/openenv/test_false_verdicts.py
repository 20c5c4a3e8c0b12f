"""Servers that conform, judged falsely before (issue 19): each test here failed before its fix."""

from __future__ import annotations

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
