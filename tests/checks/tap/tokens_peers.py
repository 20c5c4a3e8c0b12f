"""Small openai-chat peers that return token ids, for the tap's token-fidelity tests.

`engine_app` tokenizes a chat with a toy template (a role token, then one id per character, then the
assistant token) and returns vLLM's fields: `prompt_token_ids`, choice 0's `token_ids` and, when asked,
one logprob per token. `respells_replies` re-tokenizes earlier assistant turns differently (upper case), as a
chat template that does not round-trip would. `router_app` forwards to an engine and drops the token ids.
"""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

ROLE_IDS = {"system": 1, "user": 2, "assistant": 3, "tool": 4}
REPLY = "ok"


def template(messages: list[dict[str, Any]], respell: bool) -> list[int]:
    ids: list[int] = []
    for message in messages:
        content = str(message.get("content") or "")
        if respell and message.get("role") == "assistant":
            content = content.upper()
        ids += [ROLE_IDS.get(str(message.get("role")), 0), *(ord(c) for c in content)]
    return [*ids, ROLE_IDS["assistant"]]


def engine_app(respells_replies: bool = False) -> Starlette:
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        prompt = template(body["messages"], respells_replies)
        completion = [ord(c) for c in REPLY]
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": REPLY},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            entries = [{"token": c, "logprob": -0.5, "bytes": [ord(c)], "top_logprobs": []} for c in REPLY]
            choice["logprobs"] = {"content": entries}
        reply: dict[str, Any] = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": body.get("model", "toy"),
            "choices": [choice],
            "usage": {
                "prompt_tokens": len(prompt),
                "completion_tokens": len(completion),
                "total_tokens": len(prompt) + len(completion),
            },
        }
        if body.get("return_token_ids"):
            reply["prompt_token_ids"] = prompt
            choice["token_ids"] = completion
        return JSONResponse(reply)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def router_app(engine_url: str) -> Starlette:
    """A router stand-in that passes chats on and loses the token ids on the way back."""

    async def chat(request: Request) -> JSONResponse:
        async with httpx.AsyncClient() as client:
            answer = await client.post(f"{engine_url}/v1/chat/completions", content=await request.body())
        reply = answer.json()
        reply.pop("prompt_token_ids", None)
        for choice in reply.get("choices", []):
            choice.pop("token_ids", None)
        return JSONResponse(reply, status_code=answer.status_code)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
