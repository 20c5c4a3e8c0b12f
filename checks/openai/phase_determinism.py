"""OA-08: one seeded temperature-0 request repeated serially and under concurrent load."""

from __future__ import annotations

import asyncio

from checks.core import PhaseStopped
from checks.decision import record
from checks.openai import judging
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.requests import chat_body

DETERMINISM_CLAUSES = ("openai.determinism.repeat", "openai.determinism.declared")


async def determinism_phase(ctx: Ctx) -> None:
    report = ctx.report
    profile = ctx.options.profile()
    model = await model_of(ctx)
    extra = {"logprobs": True} if profile.logprobs else {}
    body = chat_body(model, "Write a haiku about a lighthouse.", ctx.options.max_tokens_cap, **extra)
    load = [chat_body(model, f"Count to {n + 3}.", 16) for n in range(min(ctx.options.concurrency, 4))]
    async with client(ctx, "repeats") as http:
        replies = [await http.chat(body) for _ in range(ctx.options.repeats)]
        # The same request twice more, each amid other requests in flight.
        for _ in range(2):
            mixed = await asyncio.gather(http.chat(body), *(http.chat(other) for other in load))
            replies.append(mixed[0])
    failed = [r.describe() for r in replies if r.status != 200]
    if failed:
        raise PhaseStopped(f"a repeat failed: {failed[0]}", http.transcript)
    _, rate = judging.divergence(replies)
    if not profile.deterministic:
        report.unsupported("openai.determinism.declared", f"the profile says not deterministic ({rate})")
        report.unsupported("openai.determinism.repeat", f"the profile says not deterministic ({rate})")
        return
    record(report, judging.repeats_identical(replies, DETERMINISM_CLAUSES), http.transcript)
