"""The ORS message rules as pure judges: an observed answer in, clause decisions or a problem out.

Nothing here touches the network, so a live phase, a parity run and a test
on built bytes all use the same rules. The SSE grammar is the one parser of
`checks.http_client`; ORS's own layer (task_id first, one terminal event,
chunk data joined before end data) is here.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from checks.decision import Decision, missed, passed
from checks.evidence import summarize, truncate
from checks.http_client import Reply, SseParser

TERMINAL = ("end", "error")


class NonFinite(float):
    """A NaN or Infinity token in JSON text (Python's json writes them; JSON has no such numbers)."""


def _non_finite(token: str) -> NonFinite:
    return NonFinite(token.replace("Infinity", "inf"))


def strict_json(text: str) -> tuple[Any, str]:
    """The JSON value of `text` and "" , or (None, why it is not JSON); NaN/Infinity come back as `NonFinite`."""
    try:
        return json.loads(text, parse_constant=_non_finite), ""
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON ({truncate(str(exc), 80)}): {truncate(text, 120)!r}"


@dataclass
class OrsStream:
    """A call stream as ORS reads it: its events as (type, data), and its comment lines (keep-alive pings)."""

    events: list[tuple[str, str]] = field(default_factory=list)
    comments: int = 0

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    def first(self, name: str) -> str | None:
        return next((data for event, data in self.events if event == name), None)

    def describe(self) -> str:
        shown = ", ".join(f"{name}({len(data)} chars)" for name, data in self.events[:12])
        return f"[{shown}{', ...' if len(self.events) > 12 else ''}]"


def parse_stream(text: str) -> OrsStream:
    """The events of an SSE body (CR, LF or CRLF end lines), read by the one SSE parser."""
    parser = SseParser()
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        parser.feed(line)
    parser.end()
    return OrsStream(list(parser.events.named), parser.events.comments)


def is_sse(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


def judge_content_type(reply: Reply) -> Decision:
    clause = "ors.call.sse-content-type"
    expected = "200 text/event-stream (the request said Accept: application/json)"
    if reply.status == 200 and is_sse(reply.content_type):
        return passed(clause, actual=reply.content_type, expected=expected)
    return missed(clause, expected=expected, actual=reply.describe())


def judge_first_event(stream: OrsStream) -> Decision:
    clause = "ors.call.first-event-task-id"
    expected = "the first event is task_id with a non-empty id"
    if stream.events and stream.events[0][0] == "task_id" and stream.events[0][1].strip():
        return passed(clause, actual=f"task_id {truncate(stream.events[0][1], 40)}", expected=expected)
    return missed(clause, expected=expected, actual=f"events {stream.describe()}")


def terminal_problem(stream: OrsStream) -> str:
    """Why the stream is not ended by exactly one end or error with nothing after it ("" when it is)."""
    terminals = [i for i, name in enumerate(stream.names()) if name in TERMINAL]
    if not terminals:
        return f"no end or error event: {stream.describe()}"
    if len(terminals) > 1 or terminals[0] != len(stream.events) - 1:
        return f"events after the terminal {stream.events[terminals[0]][0]}: {stream.describe()}"
    return ""


def judge_terminal(stream: OrsStream) -> Decision:
    clause = "ors.call.terminal-event"
    expected = "exactly one end or error event, the last one"
    problem = terminal_problem(stream)
    if problem:
        return missed(clause, expected=expected, actual=problem)
    return passed(clause, actual=f"ends with {stream.events[-1][0]}", expected=expected)


def reassembled(stream: OrsStream) -> str | None:
    """The RunToolOutput text: every chunk's data, then the end's, joined; None without an end event."""
    end = stream.first("end")
    if end is None:
        return None
    chunks = [data for name, data in stream.events if name == "chunk"]
    return "".join(chunks) + end


def judge_chunks(stream: OrsStream) -> Decision:
    clause = "ors.call.chunk-reassembly"
    expected = "chunk data + end data join into one JSON object"
    text = reassembled(stream)
    count = stream.names().count("chunk")
    if text is None:
        return missed(clause, expected=expected, actual=f"no end event after {count} chunks: {stream.describe()}")
    value, problem = strict_json(text)
    if problem or not isinstance(value, dict):
        return missed(clause, expected=expected, actual=f"{count} chunks + end: {problem or summarize(value, 120)}")
    return passed(clause, actual=f"{count} chunks + end: {len(text)} characters of JSON", expected=expected)


def blocks_problem(value: Any) -> str:
    """Why `value` is not an ORS Blocks array ("" when it is)."""
    if not isinstance(value, list):
        return f"not an array: {summarize(value, 120)}"
    for i, block in enumerate(value):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            continue
        if kind == "image" and isinstance(block.get("data"), str) and isinstance(block.get("mimeType"), str):
            continue
        return f"block {i} is not a text or image block: {summarize(block, 120)}"
    return ""


def judge_result(result: Any) -> list[Decision]:
    """result-envelope, tooloutput-shape and reward-number for one parsed RunToolOutput."""
    envelope = "ors.call.result-envelope"
    expected = '{"ok": true, "output": ToolOutput} or {"ok": false, "error": str}'
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    if result["ok"] is False:
        if isinstance(result.get("error"), str):
            return [passed(envelope, actual=f"ok:false {truncate(result['error'], 80)!r}", expected=expected)]
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    output = result.get("output")
    if not isinstance(output, dict):
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    return [passed(envelope, actual="ok:true with an output object", expected=expected), *judge_output(output)]


def judge_output(output: dict[str, Any]) -> list[Decision]:
    shape = "ors.call.tooloutput-shape"
    expected = "blocks: Blocks, finished: bool, metadata: object or null"
    problem = blocks_problem(output.get("blocks"))
    if not problem and not isinstance(output.get("finished"), bool):
        problem = f"finished is {summarize(output.get('finished'), 40)}"
    if not problem and output.get("metadata") is not None and not isinstance(output.get("metadata"), dict):
        problem = f"metadata is {summarize(output.get('metadata'), 60)}"
    decisions = [
        missed(shape, expected=expected, actual=problem)
        if problem
        else passed(shape, actual="well formed", expected=expected)
    ]
    return [*decisions, judge_reward(output.get("reward"))]


def judge_reward(reward: Any) -> Decision:
    clause = "ors.call.reward-number"
    expected = "a finite number or null"
    if reward is None:
        return passed(clause, actual="null", expected=expected)
    if isinstance(reward, NonFinite) or (isinstance(reward, float) and not math.isfinite(reward)):
        return missed(clause, expected=expected, actual=f"{reward} (not a JSON number)")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        return passed(clause, actual=repr(reward), expected=expected)
    return missed(clause, expected=expected, actual=f"{type(reward).__name__} {summarize(reward, 60)}")


def result_of(stream: OrsStream) -> tuple[Any, str]:
    """The parsed RunToolOutput of a stream ending in end, or (None, why there is none)."""
    text = reassembled(stream)
    if text is None:
        error = stream.first("error")
        return None, f"error event {truncate(error, 80)!r}" if error is not None else f"no end: {stream.describe()}"
    return strict_json(text)


def refused(reply: Reply) -> bool:
    return 400 <= reply.status < 500


def server_error(reply: Reply) -> bool:
    return reply.status >= 500 or reply.status == 0


def error_body_problem(reply: Reply) -> str:
    """Why a 4xx/5xx answer is not a JSON object with "detail" ("" when it is)."""
    if isinstance(reply.body, dict) and "detail" in reply.body:
        return ""
    return f"{reply.method} {reply.path}: {reply.describe(100)}"


def tools_problem(body: Any) -> str:
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list):
        return f"no tools array: {summarize(body, 120)}"
    for spec in tools:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            return f"a tool without a string name: {summarize(spec, 120)}"
        if not isinstance(spec.get("description"), str):
            return f"tool {spec['name']!r} has no string description"
        if "input_schema" not in spec:
            return f"tool {spec['name']!r} has no input_schema key"
        schema = spec["input_schema"]
        if schema is not None and not (isinstance(schema, dict) and schema.get("type", "object") == "object"):
            return f"tool {spec['name']!r}: input_schema is not null or an object schema: {summarize(schema, 80)}"
    return ""


def tasks_problem(body: Any) -> str:
    tasks = body.get("tasks") if isinstance(body, dict) else None
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        return f"no tasks array of objects: {summarize(body, 120)}"
    if not isinstance(body.get("env_name"), str):
        return f"no env_name string: {summarize(body, 120)}"
    return ""


def sid_of(reply: Reply) -> tuple[str | None, str]:
    """The id a /create_session answer carries and its form ("json" or "sse"), or (None, what came)."""
    if reply.status == 200 and isinstance(reply.body, dict) and isinstance(reply.body.get("sid"), str):
        return (reply.body["sid"] or None), "json"
    if reply.status == 200 and is_sse(reply.content_type):
        stream = parse_stream(reply.text)
        end, _ = strict_json(stream.first("end") or "null")
        if isinstance(end, dict) and isinstance(end.get("sid"), str) and end["sid"]:
            return end["sid"], "sse"
        sid = (stream.first("task_id") or "").strip()
        return (sid or None), "sse"
    return None, reply.describe(120)


def input_for(schema: Any) -> dict[str, Any]:
    """An input satisfying an object schema's required properties with the plainest values."""
    if not isinstance(schema, dict):
        return {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    plain = {"string": "", "integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}
    made: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = properties.get(name) if isinstance(properties, dict) else None
        prop = prop if isinstance(prop, dict) else {}
        if "default" in prop:
            made[name] = prop["default"]
        elif isinstance(prop.get("enum"), list) and prop["enum"]:
            made[name] = prop["enum"][0]
        else:
            made[name] = plain.get(str(prop.get("type")), "")
    return made


def breaking_input(schema: Any) -> dict[str, Any] | None:
    """An input the schema refuses (a required property of the wrong type), or None when none is known."""
    if not isinstance(schema, dict) or not schema.get("required"):
        return None
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    name = schema["required"][0]
    prop = properties.get(name) if isinstance(properties, dict) else None
    kind = prop.get("type") if isinstance(prop, dict) else None
    wrong = {"string": {"not": "a string"}, "integer": "seven", "number": "seven", "boolean": "maybe"}
    return {**input_for(schema), name: wrong[kind]} if kind in wrong else None
