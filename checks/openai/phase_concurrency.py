"""OA-14: parallel distinct requests, each carrying a nonce its reply may repeat but never swap."""

from __future__ import annotations

import asyncio

from checks.core import percentile, seconds
from checks.decision import record
from checks.openai import judging
from checks.openai.facts import client, echoes, model_of
from checks.openai.options import Ctx
from checks.openai.requests import chat_body, nonce, repeat_prompt


async def concurrency_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    codes = [nonce() for _ in range(ctx.options.concurrency)]
    async with client(ctx, f"{len(codes)} parallel requests") as http:
        echoing = await echoes(ctx, http)
        bodies = [chat_body(model, repeat_prompt(code), ctx.options.max_tokens_cap) for code in codes]
        replies = await asyncio.gather(*(http.chat(body) for body in bodies))
    record(report, judging.parallel_answers(codes, replies, echoing), http.transcript)
    times = [r.elapsed for r in replies if r.status == 200]
    report.info(
        "openai.concurrency.latency",
        actual=f"p50 {seconds(percentile(times, 0.5))}, p95 {seconds(percentile(times, 0.95))} over {len(times)}",
    )
