"""The reference backend's tokenizer and chat template: one token per character, ChatML-like turns.

The template is prefix-stable: a turn's prompt plus its completion is exactly
the start of the next turn's rendered prompt (up to the newline after the end
token), which is the TITO invariant a session server keeps.
"""

from __future__ import annotations

import json
from typing import Any

IM_START = 1
IM_END = 2
TOOL_START = 3
TOOL_END = 4
TEXT_OFFSET = 16  # a character's token id is its code point plus this
SPECIAL_PIECES = {IM_START: "<|im_start|>", IM_END: "<|im_end|>", TOOL_START: "<tool_call>", TOOL_END: "</tool_call>"}
ROLES = ("system", "user", "assistant", "tool")


def encode(text: str) -> list[int]:
    """Characters one token each; the tool-call markers are single special tokens."""
    ids: list[int] = []
    for index, part in enumerate(text.split("<tool_call>")):
        if index:
            ids.append(TOOL_START)
        for inner, chunk in enumerate(part.split("</tool_call>")):
            if inner:
                ids.append(TOOL_END)
            ids += [ord(ch) + TEXT_OFFSET for ch in chunk]
    return ids


def piece(token_id: int) -> str:
    return SPECIAL_PIECES.get(token_id) or chr(token_id - TEXT_OFFSET)


def decode(token_ids: list[int]) -> str:
    """The text of the tokens; the chat markers are left out, the tool-call markers kept."""
    return "".join(piece(t) for t in token_ids if t not in (IM_START, IM_END))


def tool_call_text(name: str, arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}, separators=(",", ":")) + "</tool_call>"


def message_body(message: dict[str, Any]) -> str:
    """What an assistant (or any) message contributes between its role line and its end token."""
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, json.JSONDecodeError):
            arguments = function.get("arguments")
        text += tool_call_text(str(function.get("name")), arguments)
    return text


def generation_prompt() -> list[int]:
    return [IM_START, *encode("assistant\n")]


def render(messages: list[dict[str, Any]], tools: list[Any] | None, add_generation_prompt: bool = True) -> list[int]:
    """Token ids of a conversation; roles must be checked by the caller."""
    ids: list[int] = []
    if tools:
        names = [str((tool.get("function") or {}).get("name")) for tool in tools if isinstance(tool, dict)]
        ids += [IM_START, *encode("tools\n" + json.dumps(names)), IM_END, *encode("\n")]
    for message in messages:
        ids += [IM_START, *encode(f"{message['role']}\n{message_body(message)}"), IM_END, *encode("\n")]
    if add_generation_prompt:
        ids += generation_prompt()
    return ids
