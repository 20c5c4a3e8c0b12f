"""OA-15: a prompt longer than the declared context window."""

from __future__ import annotations

from checks.decision import record
from checks.openai import judging
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.requests import long_prompt_words


async def context_phase(ctx: Ctx) -> None:
    window = ctx.options.profile().context_window
    if window is None:
        ctx.report.unsupported("openai.limits.context-overflow", "no context window in the profile")
        return
    model = await model_of(ctx)
    body = {
        "model": model,
        "messages": [{"role": "user", "content": long_prompt_words(window + window // 2)}],
        "max_tokens": 8,
    }
    async with client(ctx, "context overflow") as http:
        reply = await http.chat(body)
    record(ctx.report, judging.context_overflow(reply, window), http.transcript)
