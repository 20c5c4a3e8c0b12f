"""OA-14: parallel distinct requests, each carrying a nonce its reply may repeat but never swap."""

from __future__ import annotations

import asyncio
import re

from checks.core import percentile, seconds
from checks.openai.facts import client, content_of, echoes, model_of
from checks.openai.options import Ctx
from checks.openai.requests import chat_body, nonce, repeat_prompt
from checks.openai.shapes import chat_problems

NONCE = re.compile(r"n[0-9a-f]{10}")


async def concurrency_phase(ctx: Ctx) -> None:
    report = ctx.report
    model = await model_of(ctx)
    codes = [nonce() for _ in range(ctx.options.concurrency)]
    async with client(ctx, f"{len(codes)} parallel requests") as http:
        echoing = await echoes(ctx, http)
        bodies = [chat_body(model, repeat_prompt(code), ctx.options.max_tokens_cap) for code in codes]
        replies = await asyncio.gather(*(http.chat(body) for body in bodies))
    problems = []
    for code, reply in zip(codes, replies, strict=True):
        if reply.status != 200 or chat_problems(reply.body):
            problems.append(f"{code}: {reply.describe()}")
            continue
        seen = set(NONCE.findall(content_of(reply.body)))
        foreign = seen & (set(codes) - {code})
        if foreign:
            problems.append(f"the reply to {code} carries {sorted(foreign)}")
        elif echoing and code not in seen:
            problems.append(f"the reply to {code} does not repeat it: {content_of(reply.body)[:80]!r}")
    ids = [r.body.get("id") for r in replies if isinstance(r.body, dict)]
    if len(set(map(str, ids))) != len(ids):
        problems.append(f"reply ids repeat: {ids}")
    how = "each reply repeats its own nonce" if echoing else "no reply carries another's nonce (no echo to confirm)"
    report.check(
        not problems,
        "openai.concurrency.parallel",
        expected=f"{len(codes)} x 200 with unique ids; {how}",
        actual="; ".join(problems[:4]) or "all answered their own request",
        evidence=http.transcript,
    )
    times = [r.elapsed for r in replies if r.status == 200]
    report.info(
        "openai.concurrency.latency",
        actual=f"p50 {seconds(percentile(times, 0.5))}, p95 {seconds(percentile(times, 0.95))} over {len(times)}",
    )
