"""The ORS judges on built bytes, with no server."""

import json

import pytest

from checks.http_client import Reply
from checks.ors.inputs import breaking_input, plain_input
from checks.ors.judging import blocks_problem, judge_health, judge_ping, judge_teardown, tools_problem
from checks.ors.judging_calls import (
    judge_after_finished,
    judge_chunks,
    judge_failing_tools,
    judge_first_event,
    judge_result,
    judge_task_ids,
    judge_terminal,
)
from checks.ors.stream import ToolCall, parse_stream, reassembled, sid_of, strict_json
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
    assert (
        held_by_clause(judge_result({"ok": True, "output": {**OUTPUT, "reward": None}}))["ors.call.reward-number"]
        is True
    )


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
    assert plain_input(schema) == {"a": "", "n": 0}
    assert breaking_input(schema) == {"a": {"not": "a string"}, "n": 0}
    assert breaking_input({"type": "object", "properties": {}}) is None


def test_inputs_follow_refs_bounds_enums_and_defaults():
    schema = {
        "type": "object",
        "$defs": {"Inner": {"type": "object", "properties": {"k": {"enum": ["x", "y"]}}, "required": ["k"]}},
        "properties": {
            "inner": {"$ref": "#/$defs/Inner"},
            "n": {"type": "integer", "minimum": 3, "maximum": 9},
            "f": {"type": "number", "exclusiveMinimum": 0},
            "s": {"type": "string", "minLength": 2, "maxLength": 5},
            "d": {"type": "string", "default": "dflt"},
            "o": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
            "l": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
        },
        "required": ["inner", "n", "f", "s", "d", "o", "l"],
    }
    assert plain_input(schema) == {"inner": {"k": "x"}, "n": 3, "f": 1.0, "s": "aa", "d": "dflt", "o": False, "l": [0]}
    assert plain_input(None) == {}
    assert plain_input(schema) == plain_input(schema)  # nothing random


def test_sized_inputs_are_large_strings_and_integers_within_bounds():
    from checks.ors.inputs import SIZED, sized_input

    schema = {
        "type": "object",
        "properties": {"s": {"type": "string"}, "n": {"type": "integer", "maximum": 50}, "t": {"type": "number"}},
        "required": ["s", "n", "t"],
    }
    assert sized_input(schema) == {"s": "a" * SIZED, "n": 50, "t": 0.0}
    assert sized_input({"type": "object", "properties": {"t": {"type": "number"}}, "required": ["t"]}) is None


def call_of(name, *events, status=200):
    return ToolCall({"name": name, "input": {}}, Reply(status, "text/event-stream"), stream_of(*events))


def test_failing_tools_end_with_an_error_event():
    ok = call_of("step", ("task_id", "a"), ("end", '{"ok": true, "output": {}}'))
    raised = call_of("fail", ("task_id", "b"), ("error", "kaboom"))
    cut = call_of("fail", ("task_id", "b"))
    assert held(judge_failing_tools([ok, raised])) is True
    assert held(judge_failing_tools([ok, cut])) is False
    assert held(judge_failing_tools([ok, call_of("fail", status=500)])) is False
    broken = ToolCall({"name": "fail", "input": {}}, None, failure="peer closed", broken=True)
    assert held(judge_failing_tools([ok, broken])) is False
    silent = ToolCall({"name": "slow", "input": {}}, None, failure="took longer than 5s")
    assert judge_failing_tools([ok, silent]).actual.startswith("not judged")  # a slow tool is not a failing one
    # A server that ends no result with `end` cuts every stream: a cut is not read as a failure there.
    assert held(judge_failing_tools([call_of("step", ("task_id", "a")), raised])) is True
    assert judge_failing_tools([ok]).actual.startswith("not judged")


def test_two_calls_with_one_task_id_fail_resume():
    assert judge_task_ids([call_of("a", ("task_id", "t1")), call_of("b", ("task_id", "t2"))]) is None
    assert held(judge_task_ids([call_of("a", ("task_id", "t1")), call_of("b", ("task_id", "t1"))])) is False


def test_after_finished_refused_or_unrewarded():
    rewarded = json.dumps({"ok": True, "output": {**OUTPUT, "reward": 0.0}})
    assert held(judge_after_finished(stream_of(("task_id", "t"), ("end", '{"ok": false, "error": "done"}')))) is True
    assert held(judge_after_finished(stream_of(("task_id", "t"), ("end", rewarded)))) is False
    unrewarded = json.dumps({"ok": True, "output": {**OUTPUT, "reward": None}})
    assert held(judge_after_finished(stream_of(("task_id", "t"), ("end", unrewarded)))) is None


def test_health_ping_and_teardown_judges_the_tap_shares():
    ok = Reply(200, "application/json", body={"status": "ok"}, is_json=True)
    assert held(judge_health(ok)) is True
    assert held(judge_health(Reply(204, "application/json", body={"status": "ok"}, is_json=True))) is False
    assert held(judge_ping(Reply(200, "application/json", body={"ok": True}, is_json=True))) is False
    assert held(judge_teardown({"/ping": Reply(404, "application/json")})) is True
    assert held(judge_teardown({"/ping": ok})) is False


def decision_makers_used(path):
    """The checks.decision names a module imports, and the report.check/passed/failed calls it makes."""
    import ast

    tree = ast.parse(path.read_text())
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "checks.decision"
        for alias in node.names
    }
    inline = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("check", "passed", "failed")
    ]
    return imported, inline


def test_phases_and_the_tap_decide_nothing_themselves():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    for path in sorted((root / "checks" / "ors").glob("phase_*.py")):
        imported, inline = decision_makers_used(path)
        assert imported <= {"info", "record"}, (path.name, imported)  # info only for "not judged: ..."
        assert inline == [], (path.name, inline)
    imported, inline = decision_makers_used(root / "checks" / "tap" / "ors.py")
    assert imported <= {"Decision"}, imported
    assert inline == []
