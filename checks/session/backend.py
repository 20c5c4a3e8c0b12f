"""A deterministic in-process chat backend in sglang's extended shape, for the reference session server.

It takes `input_ids` (or renders the messages itself), answers with
`choices[0].meta_info.output_token_logprobs` as `[logprob, token_id]` pairs,
and decides every reply from the conversation alone: a tool call when tools
are offered and a user just asked, a summary after tool results, an echo of
the user's text otherwise. Logprobs are fractions with a factor 3 and 7 in
the denominator, so no value survives a float32 round trip unchanged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any

from checks.session.template import IM_END, ROLES, decode, encode, piece, render, tool_call_text

MODEL_ID = "rlconform-char-1"
CONTEXT_WINDOW = 16384
DEFAULT_MAX_TOKENS = 256


@dataclass
class BackendReply:
    status: int
    body: dict[str, Any]


def openai_error(
    status: int, message: str, kind: str, param: str | None = None, code: str | None = None
) -> BackendReply:
    return BackendReply(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


def token_logprob(context: int, position: int, token_id: int) -> float:
    """Never dyadic ((3k+7)/21 with 3 not dividing 3k+7), so float32 cannot hold it exactly."""
    k = (context + 31 * position + 7 * token_id) % 89
    return -(k / 7.0 + 1.0 / 3.0)


def validate(body: dict[str, Any]) -> BackendReply | None:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return openai_error(400, "messages must be a non-empty list", "invalid_request_error", "messages")
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return openai_error(400, f"messages[{index}] has no known role", "invalid_request_error", "messages")
    if body.get("model") not in (None, MODEL_ID):
        return openai_error(
            404, f"model {body.get('model')!r} does not exist", "invalid_request_error", "model", "model_not_found"
        )
    temperature = body.get("temperature", 1.0)
    if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
        return openai_error(400, "temperature must be within [0, 2]", "invalid_request_error", "temperature")
    top = body.get("top_logprobs", 0)
    if not isinstance(top, int) or not 0 <= top <= 20:
        return openai_error(
            400, "top_logprobs must be an integer within [0, 20]", "invalid_request_error", "top_logprobs"
        )
    n = body.get("n", 1)
    if not isinstance(n, int) or n < 1:
        return openai_error(400, "n must be at least 1", "invalid_request_error", "n")
    if n > 1:
        return openai_error(400, "n > 1 is not supported by this backend", "invalid_request_error", "n", "unsupported")
    max_tokens = body.get("max_tokens", DEFAULT_MAX_TOKENS)
    if not isinstance(max_tokens, int) or max_tokens < 1:
        return openai_error(400, "max_tokens must be a positive integer", "invalid_request_error", "max_tokens")
    return None


PLACE = re.compile(r"\"([A-Z][\w-]*)\"|\b(?:in|for|of|at)\s+([A-Z][\w-]*)")


def _arguments(parameters: dict[str, Any], place: str) -> dict[str, Any]:
    properties = parameters.get("properties") or {}
    arguments: dict[str, Any] = {}
    for key in parameters.get("required") or list(properties):
        kind = (properties.get(key) or {}).get("type")
        arguments[key] = 1 if kind in ("integer", "number") else True if kind == "boolean" else place
    return arguments


def _mentioned(function: dict[str, Any], user_text: str) -> bool:
    """A tool is wanted when the user names it or a word of its name longer than three letters."""
    name = str(function.get("name"))
    words = [w for w in re.split(r"[_\W]+", name.lower()) if len(w) > 3]
    return name in user_text or any(w in user_text.lower() for w in words)


def _tool_calls(tools: list[Any], tool_choice: Any, user_text: str) -> list[tuple[str, dict[str, Any]]]:
    """One call per wanted tool and per place the user names (two places: parallel calls)."""
    functions = [t["function"] for t in tools if isinstance(t, dict) and isinstance(t.get("function"), dict)]
    if isinstance(tool_choice, dict):
        forced = (tool_choice.get("function") or {}).get("name")
        functions = [f for f in functions if f.get("name") == forced]
    chosen = [f for f in functions if _mentioned(f, user_text)]
    if not chosen and (tool_choice == "required" or isinstance(tool_choice, dict)):
        chosen = functions[:1]
    places = list(dict.fromkeys(quoted or bare for quoted, bare in PLACE.findall(user_text))) or ["Paris"]
    return [(str(f.get("name")), _arguments(f.get("parameters") or {}, place)) for f in chosen for place in places]


def reply_text(
    messages: list[dict[str, Any]], tools: list[Any], tool_choice: Any
) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The completion's text and the tool calls it spells out."""
    last = messages[-1]
    last_text = last.get("content") if isinstance(last.get("content"), str) else ""
    if last.get("role") == "tool":
        results = [m.get("content") for m in messages if m.get("role") == "tool"]
        return f"The tools said: {results[-1]}.", []
    if tools and tool_choice != "none" and last.get("role") == "user":
        calls = _tool_calls(tools, tool_choice, last_text)
        if calls:
            return "".join(tool_call_text(name, args) for name, args in calls), calls
    nonce = re.search(r"nonce[:= ]+(\w+)", last_text)
    if nonce:
        return f"echo {nonce.group(1)}", []
    return f"You said: {last_text}", []


class Backend:
    """Stateless apart from its delay: the same input_ids and parameters give the same reply."""

    def __init__(self, delay: float = 0.005) -> None:
        self.delay = delay

    def models(self) -> BackendReply:
        return BackendReply(
            200,
            {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "rlconform"}]},
        )

    async def chat(self, body: dict[str, Any]) -> BackendReply:
        problem = validate(body)
        if problem is not None:
            return problem
        tools = body.get("tools") or []
        messages: list[dict[str, Any]] = body["messages"]
        input_ids = body.get("input_ids")
        if not isinstance(input_ids, list):
            input_ids = render(messages, tools)
        if len(input_ids) >= CONTEXT_WINDOW:
            return openai_error(
                400,
                f"context too long: {len(input_ids)} tokens, the window is {CONTEXT_WINDOW}",
                "invalid_request_error",
                "messages",
                "context_length_exceeded",
            )
        if self.delay:
            await asyncio.sleep(self.delay)
        return BackendReply(200, self._generate(body, messages, tools, input_ids))

    def _generate(
        self, body: dict[str, Any], messages: list[dict[str, Any]], tools: list[Any], input_ids: list[int]
    ) -> dict[str, Any]:
        text, calls = reply_text(messages, tools, body.get("tool_choice"))
        digest = hashlib.sha256(json.dumps(input_ids).encode()).hexdigest()
        output_ids = [*encode(text), IM_END]
        max_tokens = body.get("max_tokens", DEFAULT_MAX_TOKENS)
        finish = "tool_calls" if calls else "stop"
        if len(output_ids) > max_tokens:
            output_ids, finish, calls = output_ids[:max_tokens], "length", []
        context = int(digest[:8], 16) + int(body.get("seed") or 0)
        logprobs = [token_logprob(context, position, token) for position, token in enumerate(output_ids)]
        message: dict[str, Any] = {"role": "assistant", "content": "" if calls else decode(output_ids)}
        if calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{digest[:10]}_{index}",
                    "type": "function",
                    "index": index,
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
                for index, (name, arguments) in enumerate(calls)
            ]
        top = body.get("top_logprobs") or 0
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "logprobs": {
                "content": [self._logprob_entry(t, lp, top) for t, lp in zip(output_ids, logprobs, strict=True)]
            }
            if body.get("logprobs")
            else None,
            "finish_reason": finish,
        }
        if body.get("return_meta_info"):
            choice["meta_info"] = {
                "output_token_logprobs": [[lp, t] for t, lp in zip(output_ids, logprobs, strict=True)],
                "completion_tokens": len(output_ids),
                "prompt_tokens": len(input_ids),
                "weight_version": "default",
            }
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": MODEL_ID,
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(input_ids),
                "completion_tokens": len(output_ids),
                "total_tokens": len(input_ids) + len(output_ids),
            },
        }

    @staticmethod
    def _logprob_entry(token_id: int, logprob: float, top: int) -> dict[str, Any]:
        text = piece(token_id)
        alternatives = [{"token": text, "logprob": logprob, "bytes": list(text.encode())}]
        alternatives += [{"token": f"<alt{i}>", "logprob": logprob - i, "bytes": None} for i in range(1, top)]
        return {"token": text, "logprob": logprob, "bytes": list(text.encode()), "top_logprobs": alternatives[:top]}
