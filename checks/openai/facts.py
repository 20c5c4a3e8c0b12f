"""Per-run facts a phase needs, fetched by the first phase that needs them: the model id, the echo habit."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped
from checks.evidence import Transcript
from checks.http_client import HttpClient, Reply, StreamReply
from checks.http_options import HttpOptions
from checks.openai.options import Ctx
from checks.openai.requests import chat_body, nonce, repeat_prompt
from checks.openai.shapes import message_of

BODY_CAP = 8 * 1024 * 1024


class ChatClient(HttpClient):
    """The recorded HTTP client for an OpenAI-compatible base URL (ending in `/v1`, or a session's
    `.../sessions/<id>/v1`). Bodies are read raw, uncompressed, so a content-length can be checked."""

    def __init__(
        self,
        base_url: str,
        options: HttpOptions,
        timeout: float,
        transcript: Transcript,
        *,
        authorized: bool = True,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(
            base_url,
            transcript,
            timeout,
            options,
            authorized=authorized,
            headers=headers,
            body_cap=BODY_CAP,
            shown=(300, 200),
            decode_content=False,
            ensure_ascii=False,
        )

    async def chat(self, body: dict[str, Any]) -> Reply:
        return await self.request("POST", "/chat/completions", body=body)

    async def stream(self, body: Any, path: str = "/chat/completions") -> StreamReply:
        return await super().stream(body, path)


def client(ctx: Ctx, label: str, *, authorized: bool = True, headers: dict[str, str] | None = None) -> ChatClient:
    """A client for the target with its own transcript in the current phase."""
    return ChatClient(
        ctx.url, ctx.options, ctx.timeout, ctx.report.transcript(label), authorized=authorized, headers=headers
    )


async def model_of(ctx: Ctx) -> str:
    """The model id to send: the option, else the first id GET /models lists."""
    if ctx.options.model:
        return ctx.options.model
    if ctx.state.model is None:
        async with client(ctx, "GET /models (model id)") as http:
            reply = await http.get("/models")
        ctx.state.model = first_model(reply)
        if ctx.state.model is None:
            raise PhaseStopped(f"no model id: set the model option (GET /models: {reply.describe()})", http.transcript)
    return ctx.state.model


def first_model(reply: Reply) -> str | None:
    data = reply.body.get("data") if reply.status == 200 and isinstance(reply.body, dict) else None
    if isinstance(data, list) and data and isinstance(data[0], dict) and isinstance(data[0].get("id"), str):
        return str(data[0]["id"])
    return None


# A target that picks canned replies at random may echo by chance; only one that repeats every
# code it is asked to repeat is held to echoing (a clause inferring from content establishes it first).
ECHO_PROBES = 4


async def echoes(ctx: Ctx, http: ChatClient) -> bool:
    """Whether the target repeats every code it is asked to repeat (learned once per run)."""
    if ctx.state.echoes is None:
        model = await model_of(ctx)
        ctx.state.echoes = True
        for _ in range(ECHO_PROBES):
            code = nonce()
            reply = await http.chat(chat_body(model, repeat_prompt(code), ctx.options.max_tokens_cap))
            if reply.status != 200 or code not in str(message_of(reply.body).get("content") or ""):
                ctx.state.echoes = False
                break
    return ctx.state.echoes
