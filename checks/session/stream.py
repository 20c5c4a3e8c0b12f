"""A session server's fake-streamed reply: the SSE events read back into one chat.completion-like object."""

from __future__ import annotations

import json
from typing import Any

from checks.http_client import parse_sse


def sse_payloads(raw: bytes) -> tuple[list[str], bool]:
    """The data payloads before `[DONE]`, and whether `[DONE]` came (read with the one SSE parser)."""
    events = parse_sse(raw.decode("utf-8", errors="replace"))
    return events.payloads, events.done


def assembled_completion(raw: bytes) -> dict[str, Any]:
    """The reply the chunks add up to: id, message (content and tool calls with ids) and finish_reason."""
    payloads, done = sse_payloads(raw)
    content, finish, reply_id = "", None, None
    calls: dict[int, dict[str, Any]] = {}
    for payload in payloads:
        try:
            chunk = json.loads(payload)
        except ValueError:
            continue
        reply_id = reply_id or chunk.get("id")
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            content += delta.get("content") or ""
            for fragment in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(fragment.get("index", 0)), {"type": "function", "function": {}})
                slot["id"] = slot.get("id") or fragment.get("id")
                function = fragment.get("function") or {}
                for key in ("name", "arguments"):
                    slot["function"][key] = slot["function"].get(key, "") + (function.get(key) or "")
            finish = choice.get("finish_reason") or finish
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return {
        "id": reply_id,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "stream": {"chunks": len(payloads), "done": done},
    }
