"""The rlmesh judges decide from observed responses alone: no channel, no stream, no report."""

from __future__ import annotations

import grpc
import numpy as np

from checks.core import NoReply
from checks.decision import Decision
from checks.rlmesh import codec, judging
from checks.rlmesh.client import JoinEnded, OverLimit, RpcFailed, StrayResponse
from checks.rlmesh.proto import core_pb2 as C
from checks.rlmesh.proto import env_pb2 as E
from checks.rlmesh.proto import spaces_pb2 as S
from tests.checks.decisions import held


def _held(decisions: list[Decision]) -> dict[str, bool | None]:
    return {d.clause_id: held(d) for d in decisions}


def _box(shape=(2,)) -> S.SpaceSpec:
    bounds = S.UniformBounds(low=np.float32(-1).tobytes(), high=np.float32(1).tobytes())
    return S.SpaceSpec(shape=list(shape), dtype=S.DATA_TYPE_FLOAT32, box=S.BoxSpec(uniform=bounds))


def _discrete(n=2) -> S.SpaceSpec:
    return S.SpaceSpec(dtype=S.DATA_TYPE_INT64, discrete=S.DiscreteSpec(n=n))


def _response(num_envs=2, obs=None, act=None, compatible=True, contract=True, component="env") -> E.HandshakeResponse:
    base = C.HandshakeResponse(compatible=compatible, peer_info=C.PeerInfo(component=component))
    response = E.HandshakeResponse(base=base)
    if contract:
        spec = C.EnvSpec(observation_space=obs or _box(), action_space=act or _discrete())
        response.env_contract.CopyFrom(
            C.EnvContract(num_envs=num_envs, autoreset_mode=C.AUTORESET_MODE_NEXT_STEP, spec=spec)
        )
    return response


def test_a_good_handshake_holds_every_clause():
    held = _held(judging.handshake(_response()))
    assert held == {
        "rlmesh.h1.compatible": True,
        "rlmesh.h1.peer-info": True,
        "rlmesh.h1.num-envs": True,
        "rlmesh.h1.autoreset-mode": True,
        "rlmesh.h1.spaces": True,
        "rlmesh.h1.render-mode-declared": True,
        "rlmesh.h5.unknown-fields": None,
    }


def test_no_contract_leaves_its_clauses_unjudged_before_they_are_checked():
    decisions = judging.handshake(_response(contract=False, component=""))
    assert _held(decisions)["rlmesh.h1.compatible"] is False
    assert _held(decisions)["rlmesh.h1.peer-info"] is False
    unjudged = [d.clause_id for d in decisions if not (d.outcome != "error")]
    assert unjudged == list(judging.CONTRACT_CLAUSES)


def test_broken_and_oversized_spaces():
    broken = judging.spaces(C.EnvSpec(observation_space=_discrete(0), action_space=_discrete()))
    assert held(broken) is False and "broken" in broken.actual
    huge = S.SpaceSpec(shape=[codec.MAX_ELEMENTS + 1], dtype=S.DATA_TYPE_UINT8, multi_binary=S.MultiBinarySpec())
    beyond = judging.spaces(C.EnvSpec(observation_space=huge, action_space=_discrete()))
    assert not (beyond.outcome != "error")
    absent = judging.spaces(C.EnvSpec(action_space=_discrete()))
    assert held(absent) is False and "observation_space absent" in absent.actual


def test_generation_gate_and_missing_base():
    refused = _response(compatible=False, contract=False)
    refused.base.error_message = "unsupported generation"
    assert held(judging.generation_gate("rlmesh-wire-v2", refused)) is True
    assert held(judging.generation_gate("rlmesh-wire-v2", _response())) is False
    assert held(judging.generation_gate("", RuntimeError("gRPC UNIMPLEMENTED"))) is False
    assert held(judging.missing_base(None)) is False
    assert held(judging.missing_base(grpc.StatusCode.INVALID_ARGUMENT, "gRPC INVALID_ARGUMENT")) is True
    assert held(judging.missing_base(grpc.StatusCode.INTERNAL, "gRPC INTERNAL")) is False


def test_contract_stable():
    assert held(judging.contract_stable(_response(), _response(), "same", "identical", "changed")) is True
    moved = judging.contract_stable(_response(), _response(num_envs=3), "same", "identical", "changed")
    assert (held(moved), moved.actual) == (False, "changed")


def test_request_id_echo():
    assert held(judging.request_id_echo([], [], 4)) is True
    assert held(judging.request_id_echo(["x"], [], 4)) is False
    assert held(judging.request_id_echo([], ["rc-3"], 2)) is False


def test_observation_layout_and_domain():
    space = codec.space_from_proto(_box(), "observation_space")
    inside = S.SpaceValue(leaves=[np.zeros(4, "<f4").tobytes()])
    decisions, decoded = judging.observation(space, inside, 2, "reset")
    assert decoded is not None and _held(decisions) == {"rlmesh.v2.obs-layout": True, "rlmesh.v2.obs-in-space": True}
    outside = S.SpaceValue(leaves=[np.full(4, 5, "<f4").tobytes()])
    assert _held(judging.observation(space, outside, 2, "step 1")[0])["rlmesh.v2.obs-in-space"] is False
    short = S.SpaceValue(leaves=[np.zeros(3, "<f4").tobytes()])
    decisions, decoded = judging.observation(space, short, 2, "step 2")
    assert decoded is None and _held(decisions) == {"rlmesh.v2.obs-layout": False}


# ---------------------------------------------------------------- what a broken exchange proves


def test_a_failed_opening_is_charged_to_the_clause_its_cause_proves():
    handshake = judging.opening_failed(RpcFailed(grpc.StatusCode.UNAVAILABLE, "down"))
    assert handshake.decisions == [] and handshake.stop.startswith("the Handshake failed")
    stray = judging.opening_failed(StrayResponse("response id 'x' answers nothing"))
    assert _held(stray.decisions) == {"rlmesh.e5.request-id-echo": False}
    refused = judging.opening_failed(JoinEnded(grpc.StatusCode.FAILED_PRECONDITION, "busy"))
    assert _held(refused.decisions) == {"rlmesh.c1.reopen": False}
    over = judging.opening_failed(OverLimit(grpc.StatusCode.RESOURCE_EXHAUSTED, "larger than max"))
    assert over.decisions == [] and "max_message_bytes" in over.stop
    silent = judging.opening_failed(NoReply("no response within 3s"))
    assert _held(silent.decisions) == {"rlmesh.s1.answered": False}
    assert "see rlmesh.s1.answered" in silent.stop
    ended = judging.opening_failed(JoinEnded(grpc.StatusCode.INTERNAL, "boom"))
    assert _held(ended.decisions) == {"rlmesh.s1.answered": False}


def test_recoverable_error_and_fatal_end():
    invalid = _error(E.ENV_ERROR_CODE_INVALID_ACTION)
    assert held(judging.recoverable_error(invalid, "rlmesh.s5.seed-length", E.ENV_ERROR_CODE_INVALID_ACTION, "x"))
    fatal = _error(E.ENV_ERROR_CODE_INVALID_ACTION, recoverable=False)
    assert not held(judging.recoverable_error(fatal, "rlmesh.s5.seed-length", E.ENV_ERROR_CODE_INVALID_ACTION, "x"))
    other = _error(E.ENV_ERROR_CODE_UNSUPPORTED)
    assert not held(judging.recoverable_error(other, "rlmesh.s5.seed-length", E.ENV_ERROR_CODE_INVALID_ACTION, "x"))
    assert held(judging.fatal_end(grpc.StatusCode.INTERNAL)) is True
    assert held(judging.fatal_end(None)) is False


def _error(code: int, recoverable: bool = True) -> E.JoinResponse:
    return E.JoinResponse(error=E.EnvError(code=code, is_recoverable=recoverable, message="m"))


def test_a_valid_request_answered_with_another_kind_is_refused():
    reset = E.JoinResponse(reset=E.ResetResponse())
    assert judging.answered_with(reset, "reset", "seeded reset") is None
    refusal = judging.answered_with(_error(E.ENV_ERROR_CODE_INTERNAL), "reset", "seeded reset")
    assert refusal is not None and _held(refusal.decisions) == {"rlmesh.s1.answered": False}
    assert refusal.stop.startswith("a valid request was refused (see rlmesh.s1.answered): seeded reset: error")
    assert held(judging.answered(reset, "reset", "x")) is True and held(judging.answered(reset, "step", "x")) is False
