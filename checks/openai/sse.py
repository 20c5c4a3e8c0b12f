"""A streamed chat judged as a whole: its chunk format, and the message its deltas add up to."""

from __future__ import annotations

import json
from typing import Any

from checks.http_client import StreamReply
from checks.openai.shapes import FINISH_REASONS


def stream_format_problems(stream: StreamReply) -> list[str]:
    """OA-09 on one stream of n=1."""
    if stream.problem:
        return [stream.problem]
    if stream.status != 200 or stream.error_reply is not None:
        shown = stream.error_reply.describe() if stream.error_reply else ""
        return [f"status {stream.status}, content-type {stream.content_type!r} {shown}"]
    chunks = stream.chunks()
    problems = []
    if None in chunks:
        problems.append(f"event {chunks.index(None)} is not JSON: {stream.payloads[chunks.index(None)][:80]!r}")
        return problems
    if not chunks:
        problems.append("no chunk before [DONE]")
        return problems
    if any(c.get("object") != "chat.completion.chunk" for c in chunks):
        problems.append("a chunk's object is not chat.completion.chunk")
    # OpenAI's chunk reference says each chunk has the same id and the same created; of model it says only
    # "the model to generate the completion", so a proxy naming it two ways (LiteLLM 1.74) breaks no rule.
    for key in ("id", "created"):
        if len({json.dumps(c.get(key)) for c in chunks}) != 1:
            problems.append(f"chunks differ in {key}")
    with_choices = [c for c in chunks if c.get("choices")]
    first_delta = (with_choices[0]["choices"][0].get("delta") or {}) if with_choices else {}
    if first_delta.get("role") != "assistant":
        problems.append(f"the first delta has role {first_delta.get('role')!r}")
    reasons = [ch.get("finish_reason") for c in with_choices for ch in c["choices"] if ch.get("finish_reason")]
    if len(reasons) != 1 or reasons[0] not in FINISH_REASONS:
        problems.append(f"finish_reason in {len(reasons)} chunks: {reasons}")
    if not stream.done:
        problems.append("no data: [DONE]")
    if stream.after_done:
        problems.append(f"{len(stream.after_done)} event(s) after [DONE]")
    if stream.stray_lines:
        problems.append(f"lines that are no SSE field: {stream.stray_lines[:2]}")
    return problems


def assembled(stream: StreamReply) -> dict[str, Any]:
    """The message the deltas of choice 0 add up to, in the shape `shapes.comparable` returns."""
    content: list[str] = []
    calls: dict[int, list[str]] = {}
    finish = None
    for chunk in stream.chunks():
        for choice in (chunk or {}).get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for fragment in delta.get("tool_calls") or []:
                function = fragment.get("function") or {}
                slot = calls.setdefault(int(fragment.get("index", 0)), ["", ""])
                slot[0] += function.get("name") or ""
                slot[1] += function.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {
        "content": "".join(content),
        "tool_calls": [calls[index] for index in sorted(calls)],
        "finish_reason": finish,
    }


def usage_chunk_problems(stream: StreamReply, asked: bool) -> list[str]:
    """OA-11: with include_usage one last usage chunk with choices []; without it none."""
    chunks = [c for c in stream.chunks() if isinstance(c, dict)]
    carrying = [n for n, c in enumerate(chunks) if c.get("usage") is not None]
    if not asked:
        return [f"usage in chunk(s) {carrying} without include_usage"] if carrying else []
    if not chunks or carrying != [len(chunks) - 1]:
        return [f"usage in chunk(s) {carrying} of {len(chunks)}, expected only in the last"]
    if chunks[-1].get("choices") != []:
        return [f"the usage chunk has choices {str(chunks[-1].get('choices'))[:80]}"]
    return []


def stream_call_id_problems(stream: StreamReply) -> list[str]:
    """The streamed tool calls of choice 0: each index carries one non-empty id, no id serves two indices."""
    ids: dict[int, set[str]] = {}
    for chunk in stream.chunks():
        for choice in (chunk or {}).get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            for fragment in (choice.get("delta") or {}).get("tool_calls") or []:
                seen = ids.setdefault(int(fragment.get("index", 0)), set())
                if isinstance(fragment.get("id"), str) and fragment["id"]:
                    seen.add(fragment["id"])
    problems = [f"call index {index} has ids {sorted(seen)}" for index, seen in sorted(ids.items()) if len(seen) != 1]
    owners: dict[str, list[int]] = {}
    for index, seen in sorted(ids.items()):
        for call_id in seen:
            owners.setdefault(call_id, []).append(index)
    problems += [
        f"id {call_id!r} serves call indices {indices}" for call_id, indices in owners.items() if len(indices) > 1
    ]
    return problems
