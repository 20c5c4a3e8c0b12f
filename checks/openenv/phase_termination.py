"""The scripted episode ends within the declared maximum; what a step after done gets is recorded."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record, unsupported
from checks.openenv import judging_episodes as judge
from checks.openenv.episodes import finish, play
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import reward_decisions, rewards_seen
from checks.openenv.options import Ctx
from checks.openenv.session import open_session


async def termination_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        raise PhaseStopped("no valid action to script an episode with")
    ws = await open_session(ctx, "scripted episode to the end")
    try:
        run = await play(ws, options.reset, plan.valid, options.step_budget)
        for step in run.steps:
            record(report, reward_decisions(step, options, on_reset=False), ws.transcript)
        record(report, rewards_seen(run.steps, options), ws.transcript)
        record(report, judge.termination(options, run), ws.transcript)
        if run.done:
            after = await ws.step(plan.valid[0])
            record(report, judge.after_done(after), ws.transcript)
        else:
            record(report, unsupported("openenv.termination.after-done", "the episode never ended"), ws.transcript)
    finally:
        await finish(ws, ctx.timeout)
