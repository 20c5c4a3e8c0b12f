"""OA-15: a prompt longer than the declared context window."""

from __future__ import annotations

from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.requests import long_prompt_words
from checks.openai.shapes import first_choice


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
    reason = first_choice(reply.body).get("finish_reason") if reply.status == 200 else None
    ctx.report.check(
        (400 <= reply.status < 500 and reply.is_json) or reason == "length",
        "openai.limits.context-overflow",
        expected=f"a prompt of ~{window * 3 // 2} tokens: a 4xx JSON error or finish_reason length",
        actual=reply.describe() if reply.status != 200 else f"200 with finish_reason {reason!r}",
        evidence=http.transcript,
    )
