"""OA-07: logprobs when asked, none when not."""

from __future__ import annotations

from checks.decision import record
from checks.openai import judging
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.requests import chat_body

TOP_K = 3


async def logprobs_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    async with client(ctx, "logprobs") as http:
        if ctx.options.profile().logprobs:
            body = chat_body(model, "Write one short sentence about rivers.", 16, logprobs=True, top_logprobs=TOP_K)
            reply = await http.chat(body)
            record(report, judging.logprobs_content(reply, TOP_K), http.transcript)
        else:
            report.unsupported("openai.logprobs.content", "the profile says the target offers no logprobs")
        plain = await http.chat(chat_body(model, "Write one short sentence about lakes.", 16))
        record(report, judging.logprobs_absent(plain), http.transcript)
