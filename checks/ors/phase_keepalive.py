"""Overview > Session Timeout; Server-Sent Events > Why SSE: keep-alive bytes, idle expiry, pings (slow, opt-in)."""

from __future__ import annotations

import asyncio
import time

from checks.decision import info, record
from checks.ors.judging import judge_idle_expiry, judge_keepalive, judge_keeps_alive
from checks.ors.options import Ctx, OrsOptions
from checks.ors.routes import OrsClient, client, learn, tool_call
from checks.ors.stream import refused

KEEPALIVE_CLAUSES = ("ors.call.keepalive", "ors.session.idle-expiry", "ors.ping.keeps-alive")


def keepalive_waits(options: OrsOptions) -> float:
    """The seconds this phase waits by design: the idle expiry and its margin, and one slow call."""
    return options.idle_expiry + options.expiry_margin + 3 * options.keepalive_gap


async def keepalive_phase(ctx: Ctx) -> None:
    async with client(ctx, "keep-alive and expiry") as http:
        http.timeout = keepalive_waits(ctx.options) + ctx.timeout
        await learn(ctx, http)
        await _slow_call(ctx, http)
        await _expiry(ctx, http)


async def _slow_call(ctx: Ctx, http: OrsClient) -> None:
    clause = "ors.call.keepalive"
    if not ctx.options.slow_tool:
        record(ctx.report, info(clause, actual="not judged: no slow_tool named"), http.transcript)
        return
    body = tool_call(ctx, ctx.options.slow_tool, ctx.options.slow_input)
    sid = await http.episode(ctx)
    arrivals = [time.monotonic()]

    def stamp(_: bytes) -> bool:
        arrivals.append(time.monotonic())
        return False

    reply = await http.request("POST", f"/{http.env}/call", body, headers=http.session(sid), until=stamp)
    arrivals.append(arrivals[0] + reply.elapsed)
    await http.delete(sid)
    record(ctx.report, judge_keepalive(arrivals, ctx.options.keepalive_gap, reply), http.transcript)


async def _expiry(ctx: Ctx, http: OrsClient) -> None:
    options = ctx.options
    idle, half, kept = await http.episode(ctx), await http.episode(ctx), await http.episode(ctx)
    started = time.monotonic()
    halfway = started + options.idle_expiry / 2
    end = started + options.idle_expiry + options.expiry_margin
    half_alive = None
    while (now := time.monotonic()) < end:
        step = min(options.ping_every, end - now)
        if half_alive is None:
            step = min(step, max(halfway - now, 0.0))
        await asyncio.sleep(step)
        if half_alive is None and time.monotonic() >= halfway:
            half_alive = (await http.ping(half)).status == 200
        await http.ping(kept)
    gone = refused(await http.ping(idle))
    alive = await http.prompt(kept)
    for sid in (idle, half, kept):
        await http.delete(sid)
    expiry = judge_idle_expiry(half_alive, gone, options.idle_expiry, options.expiry_margin)
    record(ctx.report, [expiry, judge_keeps_alive(alive)], http.transcript)
