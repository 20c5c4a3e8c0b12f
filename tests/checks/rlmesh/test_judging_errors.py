"""The errors, render, close and shutdown judges on built answers: no server, no report."""

from __future__ import annotations

import grpc

from checks.rlmesh import judging_errors as J
from checks.rlmesh.client import JoinEnded, RpcFailed, StrayResponse
from checks.rlmesh.proto import env_pb2 as E
from checks.rlmesh.proto import spaces_pb2 as S
from tests.checks.decisions import held

INVALID, UNSUPPORTED = E.ENV_ERROR_CODE_INVALID_ACTION, E.ENV_ERROR_CODE_UNSUPPORTED


def _error(code: int, recoverable: bool = True) -> E.JoinResponse:
    return E.JoinResponse(error=E.EnvError(code=code, is_recoverable=recoverable, message="m"))


def _step(leaf: bytes = b"\0") -> E.JoinResponse:
    observation = S.SpaceValue(leaves=[leaf])
    return E.JoinResponse(step=E.StepResponse(observation=observation, rewards=[0.0], terminated_mask=b"\0"))


def test_state_unchanged_is_judged_only_after_a_refusal_on_a_replayable_env():
    replayed = J.replayed_step([_step(b"a"), _step(b"a")])
    assert replayed is not None and J.state_not_replayable(replayed) == []
    assert held(J.state_unchanged(replayed, _error(INVALID), _step(b"a"), "NaN")) is True
    assert held(J.state_unchanged(replayed, _error(INVALID), _step(b"b"), "NaN")) is False
    assert J.state_unchanged(replayed, _step(b"b"), _step(b"b"), "NaN") is None  # accepted: another clause's fault
    assert J.state_unchanged(replayed, _error(INVALID), _error(INVALID), "NaN") is None
    unreplayable = J.replayed_step([_step(b"a"), _step(b"b")])
    assert unreplayable is None and J.state_unchanged(unreplayable, _error(INVALID), _step(b"a"), "NaN") is None
    assert [held(d) for d in J.state_not_replayable(unreplayable)] == [None]


def test_bad_index_and_step_before_reset():
    assert held(J.bad_index(_error(UNSUPPORTED), (INVALID, UNSUPPORTED), "lane 9")) is True
    refused = J.bad_index(_error(UNSUPPORTED), (INVALID,), "lane 9")
    assert held(refused) is False and refused.expected == "INVALID_ACTION, recoverable"
    assert held(J.bad_index(_error(INVALID, recoverable=False), (INVALID,), "lane 9")) is False
    assert held(J.step_before_reset(_error(E.ENV_ERROR_CODE_NOT_READY))) is True
    accepted = J.step_before_reset(_step())
    assert held(accepted) is False and "env state carried over" in accepted.actual


def test_survival_a_second_join_and_a_new_session():
    reset = E.JoinResponse(reset=E.ResetResponse())
    assert held(J.survives(reset)) is True and held(J.survives(_error(INVALID))) is True
    assert held(J.survives(JoinEnded(grpc.StatusCode.UNAVAILABLE, "gone"))) is False
    assert held(J.second_join(JoinEnded(grpc.StatusCode.FAILED_PRECONDITION, "busy"))) is True
    assert held(J.second_join(JoinEnded(grpc.StatusCode.RESOURCE_EXHAUSTED, "busy"))) is False
    assert held(J.second_join(reset)) is False
    assert held(J.reopen(reset)) is True
    assert held(J.reopen(JoinEnded(grpc.StatusCode.FAILED_PRECONDITION, "still busy"))) is False
    assert held(J.reopen(E.JoinResponse(configure=E.ConfigureEnvResponse()))) is False


def test_step_deadlines():
    assert held(J.too_fast_for_timeout(0.001)) is None
    assert J.too_fast_for_timeout(J.TIMEOUT_FLOOR) is None
    assert held(J.timeout_answer(_error(E.ENV_ERROR_CODE_TIMEOUT), 0.01, 7, 0.03)) is True
    assert held(J.timeout_answer(_step(), 0.03, 7, 0.03)) is False
    assert held(J.answered_twice(StrayResponse("id rc-9 answers nothing"))) is False
    assert held(J.timeout_unjudged(_error(INVALID))) == "error"


def _render(frame: bytes | None = None, format: int = E.RENDER_FORMAT_PNG) -> E.JoinResponse:
    body = E.RenderResponse(format=format) if frame is None else E.RenderResponse(frame=frame, format=format)
    return E.JoinResponse(render=body)


def test_render_of_lane_zero():
    png = _render(J.PNG_MAGIC + b"rest")
    assert held(J.render(png, "rgb_array", False, "w")) is True
    assert held(J.render(png, "rgb_array", True, "w")) is False  # the session ended
    assert held(J.render(_render(b"not a png"), "rgb_array", False, "w")) is False
    assert held(J.render(_render(b"raw", format=99), "rgb_array", False, "w")) is True  # an unknown format: skipped
    assert held(J.render(_render(), "rgb_array", False, "w")) is False  # no frame
    assert held(J.render(_render(), "", False, "w")) is True
    assert held(J.render(png, "", False, "w")) is False  # a frame with no render mode
    assert held(J.render(_error(UNSUPPORTED), "", False, "w")) is True
    assert held(J.render(_error(UNSUPPORTED), "rgb_array", False, "w")) is False
    assert held(J.render(_step(), "rgb_array", False, "w")) is False


def _closed(*episodes: tuple[int, str, bool]) -> E.JoinResponse:
    finals = [
        E.EpisodeMetadata(env_index=lane, episode_id=id_, truncated=truncated) for lane, id_, truncated in episodes
    ]
    return E.JoinResponse(close=E.CloseEnvsResponse(final_episodes=finals))


def test_close_lists_every_active_episode_truncated_then_ends_ok():
    ok, active = grpc.StatusCode.OK, [(0, "a"), (1, "b")]
    assert held(J.close(_closed((1, "b", True), (0, "a", True)), active, set(), ok)) is True
    assert held(J.close(_closed((0, "a", True)), active, set(), ok)) is False  # lane 1 forgotten
    assert held(J.close(_closed((0, "a", True), (1, "b", False)), active, set(), ok)) is False  # not truncated
    assert held(J.close(_closed((0, "a", True), (1, "x", True)), active, set(), ok)) is False  # another id
    ended = J.close(_closed((0, "a", True)), [(0, "a")], {1}, ok)
    assert held(ended) is True and "lanes [1] ended on the step before Close" in ended.expected
    both = _closed((0, "a", True), (1, "b", True))
    assert held(J.close(both, active, set(), None)) is False  # the stream stayed open
    assert held(J.close(both, active, set(), grpc.StatusCode.INTERNAL)) is False
    assert held(J.close(_step(), active, set(), ok)) is False


def test_ended_lanes():
    step = E.JoinResponse(step=E.StepResponse(terminated_mask=b"\0\1\0", truncated_mask=b"\0\0\1"))
    assert J.ended_lanes(step, 3) == {1, 2}
    assert J.ended_lanes(step, 2) == set()  # masks of another width: no such response
    assert J.ended_lanes(_error(INVALID), 3) == set()


def test_shutdown():
    assert held(J.shutdown_failed(RpcFailed(grpc.StatusCode.UNIMPLEMENTED, ""))) is False
    assert held(J.shutdown_refused("not allowed here")) is True
    assert held(J.shutdown_refused("  ")) is False
    assert held(J.shutdown_accepted(RpcFailed(grpc.StatusCode.UNAVAILABLE, "gone"), 0.4, 3.0)) is True
    assert held(J.shutdown_accepted(RpcFailed(grpc.StatusCode.INTERNAL, "boom"), 0.4, 3.0)) is False
    assert held(J.shutdown_accepted(None, 3.0, 3.0)) is False
