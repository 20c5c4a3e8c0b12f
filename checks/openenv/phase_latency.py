"""Reset+step round trips on one socket, then on every socket of a parallel group."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from checks.core import PhaseStopped, Transcript
from checks.decision import record
from checks.openenv import judging_timing as judge
from checks.openenv.episodes import finish
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.options import Ctx, group_size
from checks.openenv.session import JsonSession, open_session, settle_all


async def latency_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        raise PhaseStopped("no valid action to step with")
    action, rounds = plan.valid[0], options.latency_rounds
    ws = await open_session(ctx, "latency, one socket")
    try:
        alone = await _round_trips(ws, options.reset, action, rounds)
    finally:
        await finish(ws, ctx.timeout)

    size = min(group_size(ctx), ctx.state.capacity or group_size(ctx))
    sessions: list[JsonSession] = []
    try:
        for index in range(size):
            sessions.append(await open_session(ctx, f"latency, group session {index + 1}"))
        per_session = await settle_all(*(_round_trips(s, options.reset, action, rounds) for s in sessions))
    finally:
        await asyncio.gather(*(finish(s, ctx.timeout) for s in sessions))
    together = [t for timings in per_session for t in timings]
    evidence: list[Transcript] = [ws.transcript] + [s.transcript for s in sessions]
    record(report, judge.latency(alone, together, size, options.latency_bound_ms), evidence)


async def _round_trips(ws: JsonSession, reset: dict[str, Any], action: Any, rounds: int) -> list[float]:
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        await ws.reset(reset)
        await ws.step(action)
        timings.append(time.perf_counter() - started)
    return timings
