"""The session-server judges and the fake-stream reader work on recorded dicts and bytes alone."""

from __future__ import annotations

import json

from checks.http_client import Reply
from checks.session import judging_phases
from checks.session.judging import (
    create_reply,
    delete_reply,
    envelope_problems,
    forced_field_problems,
    gone_reply,
    health_reply,
    new_session_records,
    tool_id_problems,
)
from checks.session.stream import assembled_completion, sse_payloads
from tests.checks.decisions import held


def record(stamp: float, **extra) -> dict:
    return {"path": "/v1/chat/completions", "status_code": 200, "timestamp": stamp, "request_timestamp": stamp, **extra}


def test_records_out_of_order_or_off_path_are_named():
    assert envelope_problems([record(1.0), record(2.0)]) == []
    problems = envelope_problems([record(2.0), {**record(1.0), "path": "/other"}])
    assert problems == [
        "record 1: path '/other', status_code 200",
        "record 1: timestamp 1.0 before the previous record's 2.0",
    ]


def test_a_recorded_request_missing_a_forced_field_is_named():
    kept = {"input_ids": [1], "logprobs": True, "return_meta_info": True}
    assert forced_field_problems([record(1.0, request=kept)]) == []
    assert forced_field_problems([record(1.0, request={**kept, "stream": True, "logprobs": False})]) == [
        "record 0: missing ['logprobs'], stream kept"
    ]


def test_a_tool_message_must_answer_a_call_of_the_previous_reply():
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    first = record(
        1.0,
        request={"messages": [{"role": "user", "content": "q"}]},
        response={"choices": [{"message": {"role": "assistant", "tool_calls": [call]}}]},
    )
    answer = {"role": "tool", "tool_call_id": "call_2", "content": "{}"}
    assistant = {"role": "assistant", "tool_calls": [call]}
    second = record(2.0, request={"messages": [{"role": "user", "content": "q"}, assistant, answer]})
    assert tool_id_problems([first, second]) == ["record 1: tool_call_id 'call_2' is none of ['call_1']"]


def test_a_fake_stream_reads_back_into_one_completion():
    chunks = [
        {"id": "r1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
        {"id": "r1", "choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": "stop"}]},
    ]
    raw = "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode() + b"data: [DONE]\r\n\r\n"
    assert sse_payloads(raw)[1] is True
    completion = assembled_completion(raw)
    assert completion["id"] == "r1" and completion["choices"][0]["message"]["content"] == "Hi there"
    assert completion["stream"] == {"chunks": 2, "done": True}


def reply(status: int, body: object = None, raw: bytes = b"") -> Reply:
    return Reply(status, content_type="application/json", body=body, is_json=body is not None, raw=raw)


def test_one_exchange_at_a_time():
    instance = "a" * 32
    assert held(health_reply(reply(200, {"status": "ok", "session_server_instance_id": instance}), None)) is True
    changed = health_reply(reply(200, {"status": "ok", "session_server_instance_id": "b" * 32}), instance)
    assert held(changed) is False and "changed from" in changed.actual
    assert held(health_reply(reply(503, {"status": "starting"}), None)) is False
    sid = "c" * 32
    assert held(create_reply(reply(200, {"session_id": sid}), set())) is True
    assert "given out before" in create_reply(reply(200, {"session_id": sid}), {sid}).actual
    assert held(create_reply(reply(200, {"session_id": "short"}), set())) is False
    assert held(delete_reply(reply(204))) is True
    assert held(delete_reply(reply(200, raw=b"{}"))) is False
    assert held(gone_reply("GET", "/sessions/x", reply(404, {"error": "session not found: x"}))) is True
    assert held(gone_reply("GET", "/sessions/x", reply(404, {"detail": "Not Found"}))) is False
    assert held(new_session_records(reply(200, {"records": []}))) is True
    assert held(new_session_records(reply(200, {"records": [record(1.0)]}))) is False


def test_a_phase_judge_decides_from_several_calls():
    assert held(judging_phases.truncation(reply(409), reply(200), "v2")) is True
    assert held(judging_phases.truncation(reply(200), reply(200), "v2")) is False
    assert held(judging_phases.truncation(reply(200), reply(200), "v1")) is True
    assert judging_phases.truncated(reply(200, {"choices": [{"finish_reason": "length"}]})) is None
    assert held(judging_phases.truncated(reply(200, {"choices": [{"finish_reason": "stop"}]}))) is None
