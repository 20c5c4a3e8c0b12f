"""Judging what came back: each function lists what is wrong with one piece of a reply (empty: nothing)."""

from __future__ import annotations

import json
import math
from typing import Any

FINISH_REASONS = {"stop", "length", "tool_calls", "content_filter", "function_call"}


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def first_choice(body: Any) -> dict[str, Any]:
    """choices[0] of a reply, or {} when there is none."""
    if isinstance(body, dict) and isinstance(body.get("choices"), list) and body["choices"]:
        choice = body["choices"][0]
        return choice if isinstance(choice, dict) else {}
    return {}


def message_of(body: Any) -> dict[str, Any]:
    message = first_choice(body).get("message")
    return message if isinstance(message, dict) else {}


def chat_problems(body: Any) -> list[str]:
    """What keeps `body` from being a chat.completion (OA-02)."""
    if not isinstance(body, dict):
        return ["the body is not a JSON object"]
    problems = []
    if body.get("object") != "chat.completion":
        problems.append(f"object is {body.get('object')!r}")
    if not isinstance(body.get("id"), str) or not body["id"]:
        problems.append("id is not a non-empty string")
    if not is_int(body.get("created")):
        problems.append("created is not an integer")
    if not isinstance(body.get("model"), str):
        problems.append("model is not a string")
    choice = first_choice(body)
    if not choice:
        return [*problems, "choices[0] is missing"]
    if choice.get("index") != 0:
        problems.append(f"choices[0].index is {choice.get('index')!r}")
    if message_of(body).get("role") != "assistant":
        problems.append("choices[0].message.role is not assistant")
    if "finish_reason" not in choice or choice["finish_reason"] is None:
        problems.append("choices[0].finish_reason is missing")
    return problems


def finish_reasons(body: Any) -> list[Any]:
    choices = body.get("choices") if isinstance(body, dict) else None
    return [c.get("finish_reason") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else []


def usage_problems(body: Any) -> list[str]:
    usage = body.get("usage") if isinstance(body, dict) else None
    if not isinstance(usage, dict):
        return ["usage is missing"]
    names = ("prompt_tokens", "completion_tokens", "total_tokens")
    bad = [n for n in names if not is_int(usage.get(n)) or usage[n] < 0]
    if bad:
        return [f"{', '.join(bad)} not a non-negative integer"]
    if usage["total_tokens"] != usage["prompt_tokens"] + usage["completion_tokens"]:
        return [f"total_tokens {usage['total_tokens']} != {usage['prompt_tokens']} + {usage['completion_tokens']}"]
    return []


def completion_tokens(body: Any) -> int | None:
    usage = body.get("usage") if isinstance(body, dict) else None
    value = usage.get("completion_tokens") if isinstance(usage, dict) else None
    return value if is_int(value) else None


def schema_problems(value: Any, schema: dict[str, Any]) -> list[str]:
    """A small JSON Schema check: object, required keys, no extras when closed, primitive property types."""
    if not isinstance(value, dict):
        return ["the arguments are not a JSON object"]
    types: dict[str, type | tuple[type, ...]] = {
        "string": str,
        "integer": int,
        "number": (int, float),
        "boolean": bool,
        "object": dict,
        "array": list,
    }
    properties = schema.get("properties", {})
    problems = [f"required {key!r} missing" for key in schema.get("required", []) if key not in value]
    for key, item in value.items():
        if key not in properties:
            if schema.get("additionalProperties") is False:
                problems.append(f"unexpected argument {key!r}")
            continue
        expected = types.get(properties[key].get("type", ""))
        if expected is not None and not isinstance(item, expected):
            problems.append(f"{key!r} is not a {properties[key]['type']}")
    return problems


def call_finish_reasons(sent: Any) -> tuple[str, ...]:
    """The finish reasons of a reply that made its calls: "tool_calls", and "stop" too where the request
    named the function in tool_choice (OpenAI's API answers a forced call so, and vLLM follows it)."""
    named = isinstance(sent, dict) and isinstance(sent.get("tool_choice"), dict)
    return ("tool_calls", "stop") if named else ("tool_calls",)


def tool_call_problems(body: Any, tools: list[dict[str, Any]], sent: Any = None) -> list[str]:
    """What is wrong with a reply that should call tools (OA-05); `sent` is the request."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    choice = first_choice(body)
    calls = message_of(body).get("tool_calls")
    problems = []
    reasons = call_finish_reasons(sent)
    if choice.get("finish_reason") not in reasons:
        problems.append(f"finish_reason is {choice.get('finish_reason')!r}, not {' or '.join(map(repr, reasons))}")
    if not isinstance(calls, list) or not calls:
        return [*problems, "message.tool_calls is empty or missing"]
    ids = [c.get("id") for c in calls if isinstance(c, dict)]
    if len(set(map(str, ids))) != len(calls):
        problems.append(f"tool call ids are not unique: {ids}")
    for position, call in enumerate(calls):
        problems += [f"call {position}: {p}" for p in _one_call_problems(call, schemas)]
    return problems


def _one_call_problems(call: Any, schemas: dict[str, Any]) -> list[str]:
    if not isinstance(call, dict):
        return ["not an object"]
    problems = []
    if not isinstance(call.get("id"), str) or not call["id"]:
        problems.append("id is not a non-empty string")
    if call.get("type") != "function":
        problems.append(f"type is {call.get('type')!r}")
    function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
    name = function.get("name")
    if name not in schemas:
        return [*problems, f"name {name!r} is not an offered tool"]
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        return [*problems, f"arguments are a {type(arguments).__name__}, not a string"]
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return [*problems, f"arguments are not valid JSON: {arguments[:80]!r}"]
    return problems + schema_problems(parsed, schemas[name])


def arguments_of(call: Any) -> Any:
    """A call's arguments parsed, or None."""
    try:
        return json.loads(call["function"]["arguments"])
    except (KeyError, TypeError, ValueError):
        return None


def logprob_problems(body: Any, k: int) -> list[str]:
    """OA-07: one entry per generated token, finite logprob <= 0, at most k sorted top_logprobs."""
    logprobs = first_choice(body).get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return [f"choices[0].logprobs.content is {summary_of(content)}"]
    problems = []
    tokens = completion_tokens(body)
    if tokens is not None and len(content) != tokens:
        problems.append(f"{len(content)} entries for {tokens} completion tokens")
    for position, entry in enumerate(content[:4096]):
        problems += [f"entry {position}: {p}" for p in _entry_problems(entry, k)]
        if len(problems) > 5:
            break
    return problems


def _entry_problems(entry: Any, k: int) -> list[str]:
    if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
        return ["no string token"]
    if not _finite_nonpositive(entry.get("logprob")):
        return [f"logprob {entry.get('logprob')!r} is not a finite number <= 0"]
    top = entry.get("top_logprobs")
    if not isinstance(top, list):
        return ["top_logprobs is not a list"]
    if len(top) > k:
        return [f"{len(top)} top_logprobs for top_logprobs={k}"]
    raw = [t.get("logprob") if isinstance(t, dict) else None for t in top]
    if not all(_finite_nonpositive(v) for v in raw):
        return [f"top_logprobs hold a bad logprob: {raw}"]
    values = [float(v) for v in raw if v is not None]
    if values != sorted(values, reverse=True):
        return [f"top_logprobs are not in descending order: {values}"]
    return []


def _finite_nonpositive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value <= 0


def token_logprobs(body: Any) -> list[Any]:
    logprobs = first_choice(body).get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    return [e.get("logprob") for e in content if isinstance(e, dict)] if isinstance(content, list) else []


# What a serializer writes for a missing value: text, but no kind of error.
NULL_WORDS = frozenset({"", "None", "null", "undefined"})


def error_shape_problem(body: Any, shape: str) -> str:
    """'' when `body` is an acceptable error body for the profile's error shape."""
    error = body.get("error") if isinstance(body, dict) else None
    if shape == "miles" and isinstance(error, str):
        return ""
    if isinstance(error, dict) and isinstance(error.get("message"), str) and isinstance(error.get("type"), str):
        if error["type"].strip() in NULL_WORDS:
            return f"error.type {error['type']!r} names no kind of error (a null written as text)"
        if "param" in error and "code" in error:
            return ""
        return "error lacks param or code"
    wanted = 'an {"error": {...}} object' + (' or {"error": "<string>"}' if shape == "miles" else "")
    return f"the body is not {wanted}: {summary_of(body)}"


def comparable(body: Any) -> dict[str, Any]:
    """What two replies to one seeded request must share: content, tool calls without ids, finish_reason."""
    message = message_of(body)
    calls = message.get("tool_calls") or []
    return {
        "content": message.get("content") or "",
        "tool_calls": [
            [c.get("function", {}).get("name"), c.get("function", {}).get("arguments")]
            for c in calls
            if isinstance(c, dict) and isinstance(c.get("function"), dict)
        ],
        "finish_reason": first_choice(body).get("finish_reason"),
    }


def summary_of(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 200 else text[:200] + "…"
