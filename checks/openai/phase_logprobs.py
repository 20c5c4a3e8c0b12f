"""OA-07: logprobs when asked, none when not."""

from __future__ import annotations

from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.requests import chat_body
from checks.openai.shapes import first_choice, logprob_problems

TOP_K = 3


async def logprobs_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    async with client(ctx, "logprobs") as http:
        if ctx.options.profile().logprobs:
            body = chat_body(model, "Write one short sentence about rivers.", 16, logprobs=True, top_logprobs=TOP_K)
            reply = await http.chat(body)
            problems = logprob_problems(reply.body, TOP_K) if reply.status == 200 else [reply.describe()]
            report.check(
                not problems,
                "openai.logprobs.content",
                expected=f"one entry per token, finite logprob <= 0, <= {TOP_K} descending top_logprobs",
                actual="; ".join(problems) or "well formed",
                evidence=http.transcript,
            )
        else:
            report.unsupported("openai.logprobs.content", "the profile says the target offers no logprobs")
        plain = await http.chat(chat_body(model, "Write one short sentence about lakes.", 16))
        logprobs = first_choice(plain.body).get("logprobs")
        report.check(
            plain.status == 200 and logprobs is None,
            "openai.logprobs.absent-unless-asked",
            expected="no choices[0].logprobs without logprobs in the request",
            actual=f"status {plain.status}, logprobs {str(logprobs)[:120]}",
            evidence=http.transcript,
        )
