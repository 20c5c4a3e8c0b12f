"""A small deterministic OpenAI-compatible chat endpoint that meets every openai-chat clause.

It is the suite's conforming peer in tests, and the base the zoo's broken
endpoints override one hook of. The "model" repeats the last user message
("You said: ..."), counts one token per word, calls the offered tool once
per quoted string in the prompt, and gives each token the logprob -(i+1)/64.
"""

from __future__ import annotations

import argparse
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from checks.asgi_server import AsgiServer, serve_asgi
from checks.errors import CheckError
from checks.serving import serve_until_interrupted

MODEL_ID = "rlconform-reference"
CONTEXT_WINDOW = 4096
ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
PIECE = re.compile(r"\S+\s*")
ARGUMENT_TOKEN = 4  # characters of tool-call arguments per token


class Refusal(CheckError):
    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code


@dataclass
class Completion:
    text: str | None
    calls: list[dict[str, Any]]
    finish: str
    prompt_tokens: int
    tokens: list[str] = field(default_factory=list)  # the generated tokens, for logprobs


def pieces(text: str) -> list[str]:
    return PIECE.findall(text)


class ReferenceModel:
    """Every decision of the endpoint, one overridable method each."""

    api_key: str | None = None

    def validate(self, body: Any) -> None:
        if not isinstance(body, dict):
            raise Refusal(400, "the body must be a JSON object")
        if body.get("model") != MODEL_ID:
            raise Refusal(404, f"The model {body.get('model')!r} does not exist", "model", "model_not_found")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise Refusal(400, "messages is required", "messages")
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                raise Refusal(400, f"unknown role in {str(message)[:60]}", "messages")
        temperature = body.get("temperature", 1)
        if not isinstance(temperature, (int, float)) or not 0 <= temperature <= 2:
            raise Refusal(400, "temperature must be in [0, 2]", "temperature")
        top = body.get("top_logprobs")
        if top is not None and (not isinstance(top, int) or not 0 <= top <= 20):
            raise Refusal(400, "top_logprobs must be in [0, 20]", "top_logprobs")
        n = body.get("n", 1)
        if not isinstance(n, int) or not 1 <= n <= 8:
            raise Refusal(400, "n must be in [1, 8]", "n")
        self.validate_tool_ids(messages)
        if prompt_tokens(messages) > CONTEXT_WINDOW:
            raise Refusal(400, "the prompt exceeds the context window", "messages", "context_length_exceeded")

    def validate_tool_ids(self, messages: list[dict[str, Any]]) -> None:
        known: set[str] = set()
        for message in messages:
            if message["role"] == "assistant":
                known = {str(c.get("id")) for c in message.get("tool_calls") or [] if isinstance(c, dict)}
            elif message["role"] == "tool" and message.get("tool_call_id") not in known:
                raise Refusal(400, f"tool_call_id {message.get('tool_call_id')!r} matches no call", "messages")

    def complete(self, body: dict[str, Any]) -> Completion:
        messages = body["messages"]
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or 1_000_000
        used = prompt_tokens(messages)
        last = messages[-1]
        if body.get("tools") and body.get("tool_choice") != "none" and last["role"] != "tool":
            return self.call_tools(body, limit, used)
        if last["role"] == "tool":
            text = "Weather: " + self.reported(messages)
        else:
            text = "You said: " + str(last.get("content") or "")
        tokens = pieces(text)
        cut = tokens[:limit]
        return Completion("".join(cut), [], "length" if len(cut) < len(tokens) else "stop", used, cut)

    def tool_results(self, messages: list[dict[str, Any]]) -> list[str]:
        """Tool results in the order of the calls they answer, whatever order they were sent in."""
        calls = next(m.get("tool_calls") or [] for m in reversed(messages) if m["role"] == "assistant")
        by_id = {m.get("tool_call_id"): str(m.get("content")) for m in messages if m["role"] == "tool"}
        return [by_id.get(c.get("id"), "") for c in calls]

    def reported(self, messages: list[dict[str, Any]]) -> str:
        """Each call's input beside the result paired with it ("Paris: {...}")."""
        calls = next(m.get("tool_calls") or [] for m in reversed(messages) if m["role"] == "assistant")
        results = self.tool_results(messages)
        arguments = [call_arguments(c) for c in calls]
        inputs = [" ".join(map(str, a.values())) if isinstance(a, dict) else "" for a in arguments]
        return "; ".join(f"{given}: {result}" for given, result in zip(inputs, results, strict=False))

    def call_tools(self, body: dict[str, Any], limit: int, used: int) -> Completion:
        tools = [t["function"] for t in body["tools"] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        forced = (body.get("tool_choice") or {}) if isinstance(body.get("tool_choice"), dict) else {}
        name = (forced.get("function") or {}).get("name") or tools[0]["name"]
        tool = next(t for t in tools if t["name"] == name)
        argument = (tool.get("parameters") or {}).get("required", ["input"])[0]
        values = re.findall(r'"([^"]+)"', str(body["messages"][-1].get("content") or "")) or ["?"]
        if body.get("parallel_tool_calls") is False:
            values = values[:1]
        calls, budget = [], limit * ARGUMENT_TOKEN
        for value in values:
            arguments = json.dumps({argument: value})
            calls.append(self.new_call(name, arguments[:budget]))
            budget -= len(arguments)
            if budget < 0:
                tokens = ["x"] * limit
                return Completion(None, calls, "length", used, tokens)
        count = sum(-(-len(c["function"]["arguments"]) // ARGUMENT_TOKEN) for c in calls)
        return Completion(None, calls, "tool_calls", used, ["x"] * count)

    def new_call(self, name: str, arguments: str) -> dict[str, Any]:
        return {
            "id": f"call_{uuid.uuid4().hex[:20]}",
            "type": "function",
            "function": {"name": name, "arguments": arguments},
        }

    def usage(self, completion: Completion) -> dict[str, int]:
        done = len(completion.tokens)
        return {
            "prompt_tokens": completion.prompt_tokens,
            "completion_tokens": done,
            "total_tokens": completion.prompt_tokens + done,
        }

    def logprobs(self, completion: Completion, top: int) -> dict[str, Any]:
        content = []
        for i, token in enumerate(completion.tokens):
            value = -(i + 1) / 64
            alternatives = [{"token": token, "logprob": value, "bytes": list(token.encode())}]
            alternatives += [{"token": f"alt{j}", "logprob": value - j, "bytes": None} for j in range(1, top)]
            content.append(
                {"token": token, "logprob": value, "bytes": list(token.encode()), "top_logprobs": alternatives[:top]}
            )
        return {"content": content}

    def message(self, completion: Completion) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.calls:
            message["tool_calls"] = completion.calls
        return message

    def render(self, body: dict[str, Any], completion: Completion) -> dict[str, Any]:
        choices = []
        for index in range(body.get("n", 1)):
            choice: dict[str, Any] = {
                "index": index,
                "message": self.message(completion),
                "finish_reason": completion.finish,
            }
            if body.get("logprobs"):
                choice["logprobs"] = self.logprobs(completion, body.get("top_logprobs") or 0)
            choices.append(choice)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": MODEL_ID,
            "choices": choices,
            "usage": self.usage(completion),
        }

    def chunks(self, body: dict[str, Any], completion: Completion) -> list[dict[str, Any]]:
        """The SSE chunks of choice 0 (n is 1 in streams), the usage chunk included when asked."""
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": MODEL_ID,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}

        out = [chunk({"role": "assistant", "content": "" if completion.text is not None else None})]
        out += [chunk({"content": token}) for token in pieces(completion.text or "")]
        for index, call in enumerate(completion.calls):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            out.append(chunk({"tool_calls": [head]}))
            arguments = call["function"]["arguments"]
            out += [
                chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + 8]}}]})
                for i in range(0, len(arguments), 8)
            ]
        out.append(chunk({}, completion.finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append({**base, "choices": [], "usage": self.usage(completion)})
        return out

    def error(self, refusal: Refusal) -> Response:
        return JSONResponse(
            {
                "error": {
                    "message": refusal.message,
                    "type": "invalid_request_error",
                    "param": refusal.param,
                    "code": refusal.code,
                }
            },
            status_code=refusal.status,
        )

    async def answer(self, body: dict[str, Any]) -> Response:
        completion = self.complete(body)
        if body.get("stream"):
            events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in self.chunks(body, completion)]
            return StreamingResponse(iter([*events, "data: [DONE]\n\n"]), media_type="text/event-stream")
        return JSONResponse(self.render(body, completion))


def call_arguments(call: Any) -> Any:
    try:
        return json.loads(call["function"]["arguments"])
    except (KeyError, TypeError, ValueError):
        return None


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(4 + len(pieces(str(m.get("content") or ""))) for m in messages)


def make_app(model: ReferenceModel | None = None) -> Starlette:
    model = model or ReferenceModel()

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": MODEL_ID, "object": "model", "created": 1_700_000_000, "owned_by": "rlconform"}],
            }
        )

    async def chat(request: Request) -> Response:
        if model.api_key and request.headers.get("authorization") != f"Bearer {model.api_key}":
            return model.error(Refusal(401, "missing or wrong API key", None, "invalid_api_key"))
        try:
            body = json.loads(await request.body())
        except ValueError:
            return model.error(Refusal(400, "the body is not valid JSON"))
        try:
            model.validate(body)
        except Refusal as refusal:
            return model.error(refusal)
        return await model.answer(body)

    return Starlette(routes=[Route("/v1/models", models), Route("/v1/chat/completions", chat, methods=["POST"])])


async def start_reference_server(host: str = "127.0.0.1", port: int = 0, *, api_key: str | None = None) -> AsgiServer:
    """The reference endpoint in-process; its `url` is the base URL ending in /v1 (`port=0`: a free port)."""
    model = ReferenceModel()
    model.api_key = api_key
    return await serve_asgi(make_app(model), host, port, path="/v1")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server openai", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--api-key", help="require this bearer token")
    args = parser.parse_args(argv)

    return serve_until_interrupted(
        lambda: start_reference_server(args.host, args.port, api_key=args.api_key),
        lambda url: f"OpenAI-compatible reference endpoint at {url}",
    )
