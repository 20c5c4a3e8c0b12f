"""One step alone, then the same step sent at once on every session of the group: do the sessions overlap?

OpenEnv gives every session its own executor, so a slow step in one session
need not hold up the others. A group that takes as long as its steps one after
another tells the user their env blocks the server (a blocking call on the
event loop, or one executor shared by all sessions). The protocol promises no
concurrency, so this is a SHOULD; a target that needs it sets latency_bound_ms.

Timings on a loaded machine are noisy: each figure is the median of a few
rounds, the number of rounds is bounded by a time budget, and a group that
looks serial is measured once more before it is reported.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from checks.core import PhaseStopped
from checks.decision import record
from checks.openenv import judging_timing as judge
from checks.openenv.episodes import finish
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.options import Ctx, group_size
from checks.openenv.session import JsonSession, open_session, settle_all

MAX_ROUNDS = 5
MEASURE_BUDGET = 6.0  # seconds of timed steps, both measurements together, before rounds are cut


async def overlap_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        raise PhaseStopped("no valid action to step with")
    size, capacity = group_size(ctx), ctx.state.capacity
    if size < 2 or (capacity is not None and capacity < size):
        why = "the group size is 1" if size < 2 else f"the server accepts {capacity} sessions, fewer than the group"
        record(report, judge.overlap_not_judged(why))
        return
    sessions: list[JsonSession] = []
    try:
        for index in range(size):
            sessions.append(await open_session(ctx, f"overlap, group session {index + 1}"))
        evidence = [session.transcript for session in sessions]
        # One session first: a reset that goes unanswered then stops the phase once, not once per session.
        resets = [await sessions[0].reset(options.reset)]
        resets += await settle_all(*(session.reset(options.reset) for session in sessions[1:]))
        refused = next((reply for reply in resets if reply.kind != "observation"), None)
        if refused is not None:
            why = f"the group was not accepted: {refused.describe()}"
            record(report, judge.overlap_not_judged(why), evidence)
            return
        first = await _time_step(sessions[0], options.reset, plan.valid[0])
        rounds = max(1, min(MAX_ROUNDS, int(MEASURE_BUDGET / (2 * max(first, 1e-6) * (size + 1)))))
        single, group = await _measure(sessions, options.reset, plan.valid[0], rounds, [first])
        quick = judge.too_quick(single)
        if quick is not None:
            record(report, quick, evidence)
            return
        if not judge.overlapped(single, group, size):  # looks serial: measure again, keep the kinder figures
            again = await _measure(sessions, options.reset, plan.valid[0], rounds, [])
            single, group = min((single, group), again, key=lambda pair: pair[1] / pair[0])
        record(report, judge.overlap(single, group, size, rounds), evidence)
    finally:
        await asyncio.gather(*(finish(session, ctx.timeout) for session in sessions))


async def _measure(
    sessions: list[JsonSession], reset: dict[str, Any], action: Any, rounds: int, single: list[float]
) -> tuple[float, float]:
    """Median seconds of one step alone and of the group's steps sent at once (resets untimed)."""
    while len(single) < rounds:
        single.append(await _time_step(sessions[0], reset, action))
    group = []
    for _ in range(rounds):
        await settle_all(*(session.reset(reset) for session in sessions))
        started = time.perf_counter()
        await settle_all(*(session.step(action) for session in sessions))
        group.append(time.perf_counter() - started)
    return statistics.median(single), statistics.median(group)


async def _time_step(session: JsonSession, reset: dict[str, Any], action: Any) -> float:
    await session.reset(reset)
    started = time.perf_counter()
    await session.step(action)
    return time.perf_counter() - started
