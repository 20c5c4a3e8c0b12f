"""The schema subset, the action generator and the frame judgements, without a server."""

from __future__ import annotations

import pytest

from checks.http_client import Reply as HttpReply
from checks.openenv.action_values import UNEXPECTED_KEY, invalid_actions, property_actions, valid_action
from checks.openenv.judging import (
    boolean_reward_problem,
    code_problem,
    envelope_problem,
    error_problem,
    reward_problem,
    signature,
    state_problem,
    unprompted_problem,
)
from checks.openenv.mcp_judging import error_response_problem
from checks.openenv.options import OpenEnvOptions
from checks.openenv.schemas import is_valid, schema_errors
from checks.openenv.session import Reply, decode_frame, ws_url

ACTION = {
    "type": "object",
    "additionalProperties": False,
    "required": ["answer", "mode"],
    "properties": {
        "answer": {"type": "string", "minLength": 1},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
        "mode": {"$ref": "#/$defs/Mode"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "$defs": {"Mode": {"enum": ["fast", "slow"], "type": "string"}},
}


@pytest.mark.parametrize(
    "value, valid",
    [
        ({"answer": "x", "mode": "fast"}, True),
        ({"answer": "x", "mode": "fast", "confidence": 100, "note": None}, True),
        ({"answer": "x", "mode": "fast", "confidence": 5.0}, True),  # 5.0 is an integer in JSON
        ({"answer": "", "mode": "fast"}, False),
        ({"answer": "x", "mode": "medium"}, False),
        ({"answer": "x", "mode": "fast", "confidence": 101}, False),
        ({"answer": "x", "mode": "fast", "confidence": True}, False),
        ({"answer": "x", "mode": "fast", "note": 3}, False),
        ({"answer": "x", "mode": "fast", "extra": 1}, False),
        ({"mode": "fast"}, False),
        (["answer"], False),
    ],
)
def test_schema_subset_validates_what_pydantic_emits(value, valid):
    assert is_valid(value, ACTION) is valid, schema_errors(value, ACTION)


def test_a_self_referencing_schema_does_not_recurse_for_ever():
    loop = {"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}}
    assert schema_errors({"x": 1}, loop) == []


def test_generated_action_is_valid_and_each_variant_breaks_the_schema():
    base = valid_action(ACTION)
    assert base == {"answer": "a", "mode": "fast"}
    variants = dict(invalid_actions(ACTION, base))
    assert set(variants) == {
        "missing required 'answer'",
        "wrong type for 'answer'",
        "bound broken for 'answer'",
        "unexpected key",
        "step data not an object",
    }
    assert variants["unexpected key"] == {**base, UNEXPECTED_KEY: 1}
    assert not any(is_valid(action, ACTION) for action in variants.values())


def test_ws_url_keeps_the_scheme_family_and_any_path_prefix():
    assert ws_url("http://127.0.0.1:8000") == "ws://127.0.0.1:8000/ws"
    assert ws_url("https://envs.example/quiz/") == "wss://envs.example/quiz/ws"


def frame(message) -> Reply:
    return Reply(message=message, is_json=True)


def test_envelope_judgement():
    good = frame({"type": "observation", "data": {"observation": {"a": 1}, "reward": None, "done": False}})
    assert envelope_problem(good) is None
    flat = frame({"type": "observation", "data": {"a": 1, "reward": None, "done": False}})
    assert "data.observation" in envelope_problem(flat)
    string_done = frame({"type": "observation", "data": {"observation": {}, "reward": 1.0, "done": "true"}})
    assert "done" in envelope_problem(string_done)
    no_reward = frame({"type": "observation", "data": {"observation": {}, "done": True}})
    assert "reward" in envelope_problem(no_reward)


def test_reward_judgement():
    assert reward_problem(0.5) is None
    assert reward_problem(None) is None  # StepResponse.reward is optional, on reset and step alike
    assert reward_problem(True) is None  # legal by the observation type: judged by the SHOULD below
    assert "JSON boolean" in boolean_reward_problem(True)
    assert boolean_reward_problem(1) is None
    assert "not a JSON number" in reward_problem("1.0")
    assert "not finite" in reward_problem(float("inf"))


def test_error_and_state_judgements():
    refused = frame({"type": "error", "data": {"code": "VALIDATION_ERROR", "message": "Invalid message", "errors": []}})
    assert error_problem(refused, "VALIDATION_ERROR", needs_errors_list=True) is None
    assert "not VALIDATION_ERROR" in error_problem(
        frame({"type": "error", "data": {"code": "X", "message": ""}}), "VALIDATION_ERROR"
    )
    assert "seven" in code_problem(frame({"type": "error", "data": {"code": "INVALID_ACTION", "message": "m"}}))
    assert state_problem(frame({"type": "state", "data": {"step_count": 0}})) is None
    assert state_problem(frame({"type": "state", "data": {"step_count": -1}})) is not None
    assert state_problem(frame({"type": "state", "data": {"step_count": True}})) is not None


def test_options_refuse_a_reversed_reward_range():
    with pytest.raises(ValueError):
        OpenEnvOptions(reward_range=(1.0, 0.0))


def test_frames_decode_without_raising_whatever_the_target_sends():
    deep = "[" * 100_000 + "]" * 100_000  # too deep for json to decode: not usable JSON, not a crash
    assert decode_frame(deep).is_json is False
    assert decode_frame(deep).describe().startswith("non-JSON text")
    assert decode_frame(b"\xff\x00").binary is True
    assert decode_frame('{"type": "state", "data": {"step_count": 0}}').kind == "state"
    assert decode_frame("NaN").is_json is True  # Python reads NaN; the reward judgement refuses it
    assert signature(decode_frame("[" * 900 + "]" * 900)).startswith("[[")


def test_unprompted_judgement():
    nothing = Reply(failure="no reply: nothing arrived within 1s")
    assert unprompted_problem(nothing) is None
    assert unprompted_problem(frame({"type": "error", "data": {"code": "SESSION_ERROR", "message": "m"}})) is None
    heartbeat = unprompted_problem(frame({"type": "heartbeat", "data": {}}))
    assert heartbeat is not None and "heartbeat" in heartbeat
    assert unprompted_problem(frame({"type": "error", "data": {"code": "UNKNOWN_TYPE", "message": "m"}}))


def test_each_property_gets_a_valid_value_other_than_the_base_or_default():
    schema = {
        "type": "object",
        "additionalProperties": False,
        "required": ["answer"],
        "properties": {
            "answer": {"enum": ["yes", "no"]},
            "share": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.5},
            "count": {"type": "integer", "minimum": 5, "maximum": 50, "multipleOf": 5, "default": 5},
            "when": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}], "default": None},
            "flag": {"type": "boolean", "default": False},
        },
    }
    actions, skipped = property_actions(schema, {"answer": "yes"})
    values = {name: action[name] for name, action in actions}
    assert values == {"answer": "no", "share": 0.25, "count": 10, "when": "2024-01-02T03:04:05Z", "flag": True}
    assert skipped == []
    assert all(is_valid(action, schema) for _, action in actions)


def test_a_property_no_sure_value_exists_for_is_left_out_not_guessed():
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "format": "file-path"},
            "code": {"type": "string", "pattern": "^[XYZ]{3}$"},
            "word": {"type": "string", "pattern": "^[a-z]+$"},
        },
    }
    actions, skipped = property_actions(schema, {})
    assert [name for name, _ in actions] == ["word"]
    assert [note.split(":")[0] for note in skipped] == ["'path'", "'code'"]


@pytest.mark.parametrize(
    "status, body, problem",
    [
        (200, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}, None),
        (400, {"jsonrpc": "2.0", "id": "server-error", "error": {"code": -32700, "message": "x"}}, None),
        (500, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": "x"}}, "a server error"),
        (400, {"detail": "bad request"}, 'jsonrpc is not "2.0"'),
        (200, {"jsonrpc": "2.0", "id": None, "result": {}}, "no error object"),
        (200, {"jsonrpc": "2.0", "id": None, "error": {"code": "-32700", "message": "x"}}, "the error object lacks"),
        (200, None, "not a JSON object"),
    ],
)
def test_a_jsonrpc_error_response_is_told_from_other_answers(status, body, problem):
    reply = HttpReply(status, "application/json", "", body, body is not None)
    found = error_response_problem(reply)
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))
