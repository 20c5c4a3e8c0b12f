"""The scripted episode ends within the declared maximum; what a step after done gets is recorded."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.openenv.episodes import finish, play
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import judge_rewards, reward_of
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
        judge_rewards(report, run.steps, options, ws.transcript)
        if options.endless:
            report.info(
                "openenv.termination.within-budget",
                actual=f"not judged: the target declares endless episodes; {run.describe()}",
                evidence=ws.transcript,
            )
        elif options.max_steps is None and not run.done:
            report.info(
                "openenv.termination.within-budget",
                actual=f"not judged: the target declares no max_steps and nothing on the wire promises an end; "
                f"{run.describe()}",
                evidence=ws.transcript,
            )
        else:
            report.check(
                run.done,
                "openenv.termination.within-budget",
                expected=f"done within {options.step_budget} steps",
                actual=run.describe(),
                evidence=ws.transcript,
            )
        if run.done:
            after = await ws.step(plan.valid[0])
            report.info(
                "openenv.termination.after-done",
                actual=f"{after.kind or 'no'} frame, reward {reward_of(after)!r}: {after.describe()}",
                evidence=ws.transcript,
            )
        else:
            report.unsupported("openenv.termination.after-done", "the episode never ended", ws.transcript)
    finally:
        await finish(ws, ctx.timeout)
