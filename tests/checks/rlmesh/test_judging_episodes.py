"""The episodes phase's judges on built step responses and tallies: no server, no report."""

from __future__ import annotations

import math

from checks.core import NoReply
from checks.rlmesh import judging_episodes as J
from checks.rlmesh.judging_episodes import Episode
from checks.rlmesh.proto import env_pb2 as E
from checks.rlmesh.step_limit import StepLimitWatch
from tests.checks.decisions import held


def _step(rewards=(0.5, 0.5), terminated=b"\0\0", truncated=b"\0\0", **fields) -> E.StepResponse:
    return E.StepResponse(rewards=list(rewards), terminated_mask=terminated, truncated_mask=truncated, **fields)


def test_step_shape_wants_a_reward_and_a_0_or_1_mask_byte_per_lane_and_no_indices():
    assert held(J.step_shape(_step(), 2, "step 1")) is True
    assert held(J.step_shape(_step(rewards=(0.5,)), 2, "step 1")) is False
    assert held(J.step_shape(_step(terminated=b"\0\2"), 2, "step 1")) is False
    shown = J.step_shape(_step(env_indices=[0, 1]), 2, "step 3")
    assert held(shown) is False and "env_indices [0, 1]" in shown.actual


def test_rewards_finite():
    assert held(J.rewards_finite(_step(), "step 1")) is True
    nan = J.rewards_finite(_step(rewards=(0.5, math.nan)), "step 2")
    assert held(nan) is False and "nan" in nan.actual


def test_autoreset_under_next_step_and_disabled():
    assert held(J.autoreset_next_step(_step(rewards=(0.0, 1.0)), 0, [], "step 2")) is True
    assert held(J.autoreset_next_step(_step(rewards=(1.0, 1.0)), 0, [], "step 2")) is False  # a reward: not fresh
    assert held(J.autoreset_next_step(_step(rewards=(0.0, 1.0), truncated=b"\1\0"), 0, [], "step 2")) is False
    assert held(J.autoreset_disabled(_step(terminated=b"\1\0"), 0, [], "step 2")) is True
    assert held(J.autoreset_disabled(_step(), 0, [], "step 2")) is False  # the ended lane started again
    again = [E.EpisodeMetadata(env_index=0)]
    assert held(J.autoreset_disabled(_step(terminated=b"\1\0"), 0, again, "step 2")) is False


def _completed(**fields) -> E.EpisodeMetadata:
    base = dict(episode_id="ep-0", seed=7, env_index=0, step_count=3, cumulative_reward=1.5, terminated=True)
    return E.EpisodeMetadata(**{**base, **fields})


def test_a_completion_must_match_the_episode_the_checker_counted():
    episode = Episode("ep-0", 7, steps=3, total=1.5)
    assert held(J.completion(episode, [_completed()], 0, True, False, "step 3")) is True
    wrong = J.completion(episode, [_completed(seed=8, step_count=4)], 0, True, False, "step 3")
    assert held(wrong) is False and "wrong seed, step_count" in wrong.actual
    assert held(J.completion(episode, [_completed(terminated=False, truncated=True)], 0, True, False, "s")) is False
    assert (
        held(J.completion(episode, [_completed(start_timestamp_ns=2, end_timestamp_ns=1)], 0, True, False, "s"))
        is False
    )
    assert held(J.completion(episode, [], 0, True, False, "step 3")) is False
    assert held(J.completion(episode, [_completed(), _completed()], 0, True, False, "step 3")) is False
    unseeded = Episode("ep-1", None, steps=3, total=1.5)
    assert held(J.completion(unseeded, [_completed(episode_id="ep-1", seed=None)], 0, True, False, "s")) is True
    # The return is compared within rounding, NaN equal to NaN (finiteness is another clause's).
    assert held(J.completion(Episode("ep-0", 7, 3, 1.5 + 1e-9), [_completed()], 0, True, False, "s")) is True
    nan = Episode("ep-0", 7, 3, math.nan)
    assert held(J.completion(nan, [_completed(cumulative_reward=math.nan)], 0, True, False, "s")) is True


def test_completions_that_no_end_explains():
    assert held(J.completion_without_end([_completed()], 0, "step 2")) is False
    assert held(J.completion_of_no_lane([_completed(env_index=5)], 5, "step 2")) is False
    assert J.none_ended([0, 1], 100) == []
    assert [held(d) for d in J.none_ended([0, 0], 100)] == [None]


def _watch(limit, **seen) -> StepLimitWatch:
    return StepLimitWatch(limit, "metadata.max_episode_steps = 8" if limit else "", **seen)


def test_step_limit_is_judged_only_when_declared_and_reached():
    none = J.step_limit(_watch(None), 100)
    assert held(none) is None and "the contract declares none" in none.actual
    bad = J.step_limit(StepLimitWatch(None, "metadata.max_episode_steps = -1"), 100)
    assert held(bad) is None and "not a positive whole number" in bad.actual
    assert held(J.step_limit(_watch(8, overrun="lane 0 has taken 9 steps"), 100)) is False
    assert held(J.step_limit(_watch(8, reached="lane 0 ended after 8 steps"), 100)) is True
    short = J.step_limit(_watch(8), 8)
    assert held(short) is None and "step budget of 8" in short.actual
    unreached = J.step_limit(_watch(8, longest=5), 100)
    assert held(unreached) is None and "the longest took 5 steps" in unreached.actual


def test_step_latency_leaves_out_the_warm_up_and_needs_three_steps():
    warm = [1.0] * J.WARM_UP_STEPS
    assert J.step_latency([*warm, 0.001, 0.001], 5) == []
    assert [held(d) for d in J.step_latency([*warm, 0.001, 0.002, 0.003], None)] == [None]
    assert [held(d) for d in J.step_latency([*warm, 0.001, 0.002, 0.003], 5)] == [True]  # the warm-up's 1 s is out
    assert [held(d) for d in J.step_latency([*warm, 0.001, 0.009, 0.009], 5)] == [False]


def test_configure_edition():
    assert held(J.configure_edition("2026.06", E.JoinResponse(configure=E.ConfigureEnvResponse()))) is True
    reset = E.JoinResponse(reset=E.ResetResponse())
    assert held(J.configure_edition("2026.06", reset)) is False
    silent = J.configure_edition("2026.06", NoReply("no response within 3s"))
    assert held(silent) is False and "a Join opened with a reset is answered" in silent.actual
