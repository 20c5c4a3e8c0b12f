"""The ORS judges on built bytes, with no server."""

import json

import pytest

from checks.http_client import Reply
from checks.ors.judging import (
    blocks_problem,
    breaking_input,
    input_for,
    judge_chunks,
    judge_first_event,
    judge_result,
    judge_terminal,
    parse_stream,
    reassembled,
    sid_of,
    strict_json,
    tools_problem,
)
from checks.task_index import splits_problem
from tests.checks.decisions import held

OUTPUT = {"blocks": [{"type": "text", "text": "hi", "detail": None}], "metadata": None, "reward": 1.0, "finished": True}


def stream_of(*events, comments=0):
    text = ": ping - 1\n\n" * comments + "".join(f"event: {name}\ndata: {data}\n\n" for name, data in events)
    return parse_stream(text)


def held_by_clause(decisions):
    return {d.clause_id: held(d) for d in decisions}


def test_a_stream_keeps_event_types_comments_and_empty_data():
    stream = parse_stream("event: task_id\r\ndata: abc\r\n\r\n: ping - 2026\n\nevent: end\ndata:\n\n")
    assert stream.events == [("task_id", "abc"), ("end", "")]
    assert stream.comments == 1


def test_chunks_join_before_the_end_data():
    text = json.dumps({"ok": True, "output": OUTPUT})
    stream = stream_of(("task_id", "t1"), ("chunk", text[:10]), ("chunk", text[10:20]), ("end", text[20:]))
    assert reassembled(stream) == text
    assert held(judge_chunks(stream)) is True


def test_a_lost_chunk_does_not_reassemble():
    text = json.dumps({"ok": True, "output": OUTPUT})
    stream = stream_of(("task_id", "t1"), ("chunk", text[10:20]), ("end", text[20:]))
    assert held(judge_chunks(stream)) is False


@pytest.mark.parametrize(
    ("events", "ok"),
    [
        ((("task_id", "t"), ("end", "{}")), True),
        ((("task_id", "t"), ("error", "boom")), True),
        ((("task_id", "t"),), False),
        ((("task_id", "t"), ("end", "{}"), ("chunk", "x")), False),
        ((("task_id", "t"), ("end", "{}"), ("end", "{}")), False),
    ],
)
def test_exactly_one_terminal_event_and_it_is_last(events, ok):
    assert held(judge_terminal(stream_of(*events))) is ok


def test_the_first_event_must_be_a_non_empty_task_id():
    assert held(judge_first_event(stream_of(("task_id", "t"), ("end", "{}")))) is True
    assert held(judge_first_event(stream_of(("id", "t"), ("end", "{}")))) is False
    assert held(judge_first_event(stream_of(("task_id", " "), ("end", "{}")))) is False


def test_result_envelopes():
    assert held_by_clause(judge_result({"ok": True, "output": OUTPUT})) == {
        "ors.call.result-envelope": True,
        "ors.call.tooloutput-shape": True,
        "ors.call.reward-number": True,
    }
    assert held_by_clause(judge_result({"ok": False, "error": "nope", "reason": "not_found"})) == {
        "ors.call.result-envelope": True
    }
    assert held_by_clause(judge_result({"ok": False})) == {"ors.call.result-envelope": False}
    assert held_by_clause(judge_result({"output": OUTPUT})) == {"ors.call.result-envelope": False}


@pytest.mark.parametrize(
    ("change", "clause"),
    [
        ({"reward": "1.0"}, "ors.call.reward-number"),
        ({"reward": True}, "ors.call.reward-number"),
        ({"finished": "true"}, "ors.call.tooloutput-shape"),
        ({"blocks": [{"text": "no type"}]}, "ors.call.tooloutput-shape"),
        ({"metadata": []}, "ors.call.tooloutput-shape"),
    ],
)
def test_bad_tool_outputs(change, clause):
    assert held_by_clause(judge_result({"ok": True, "output": {**OUTPUT, **change}}))[clause] is False


def test_a_nan_reward_is_read_as_a_non_number():
    value, problem = strict_json('{"ok": true, "output": {"blocks": [], "finished": false, "reward": NaN}}')
    assert problem == ""
    assert held_by_clause(judge_result(value))["ors.call.reward-number"] is False
    assert held_by_clause(judge_result({"ok": True, "output": {**OUTPUT, "reward": None}}))["ors.call.reward-number"] is True


def test_blocks_text_and_image():
    assert blocks_problem([{"type": "image", "data": "AAAA", "mimeType": "image/png"}]) == ""
    assert blocks_problem([{"type": "image", "data": "AAAA", "mime_type": "image/png"}]) != ""
    assert blocks_problem({"type": "text", "text": "x"}) != ""


def test_tools_and_splits_shapes():
    good = {"tools": [{"name": "a", "description": "d", "input_schema": None}]}
    assert tools_problem(good) == ""
    assert "input_schema" in tools_problem({"tools": [{"name": "a", "description": "d"}]})
    assert "description" in tools_problem({"tools": [{"name": "a", "input_schema": None}]})
    assert splits_problem([{"name": "train", "type": "train"}]) == ""
    assert "type" in splits_problem([{"name": "dev", "type": "dev"}])


def test_create_session_in_either_form():
    as_json = Reply(200, "application/json", body={"sid": "s1"}, is_json=True)
    as_sse = Reply(200, "text/event-stream; charset=utf-8", text="event: task_id\ndata: s2\n\nevent: end\ndata:\n\n")
    assert sid_of(as_json) == ("s1", "json")
    assert sid_of(as_sse) == ("s2", "sse")
    assert sid_of(Reply(200, "application/json", body={}, is_json=True))[0] is None


def test_inputs_made_from_a_schema():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["a", "n"],
    }
    assert input_for(schema) == {"a": "", "n": 0}
    assert breaking_input(schema) == {"a": {"not": "a string"}, "n": 0}
    assert breaking_input({"type": "object", "properties": {}}) is None
