"""The session-server judges and the fake-stream reader work on recorded dicts and bytes alone."""

from __future__ import annotations

import json

from checks.session.judging import envelope_problems, forced_field_problems, tool_id_problems
from checks.session.stream import assembled_completion, sse_payloads


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
