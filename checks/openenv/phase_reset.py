"""task_id and seed in the reset data change what the episode shows; a seed replays its episode."""

from __future__ import annotations

from typing import Any

from checks.decision import record, unsupported
from checks.openenv import judging_episodes as judge
from checks.openenv.episodes import finish, play
from checks.openenv.facts import action_plan, load_schema, seed_applied
from checks.openenv.options import Ctx
from checks.openenv.session import Reply, open_session


async def reset_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    base = options.reset
    seed = judge.sent_seed(base)
    # Before this phase's own session, which a one-session server could not serve beside it.
    why_not = judge.why_unrepeatable(options, await seed_applied(ctx)) if seed is not None else None
    ws = await open_session(ctx, "reset parameters")
    evidence = ws.transcript
    try:
        if "task_id" not in base:
            record(report, unsupported("openenv.reset.task-id", "the reset data sets no task_id"))
        elif options.contrast_task_id is None:
            record(report, unsupported("openenv.reset.task-id", "the target declares no contrast_task_id"))
        else:
            one = await ws.reset(base)
            other = await ws.reset({**base, "task_id": options.contrast_task_id})
            decision = judge.task_id(base["task_id"], options.contrast_task_id, _observation(one), _observation(other))
            record(report, decision, evidence)
        if seed is None:
            why = "the reset data sets no integer seed"
            record(report, [unsupported("openenv.reset.seed", why), unsupported("openenv.reset.seed-replay", why)])
            return
        script = action_plan(options, await load_schema(ctx)).valid
        budget = options.step_budget
        reference = await play(ws, base, script, budget)
        # Back to back in one session: an RNG made once per session, or a falsy-seed test
        # (`if seed:`) that skips seed 0, shows as a replay that drifts.
        for replayed in dict.fromkeys((seed, 0)):
            first_run = reference if replayed == seed else await play(ws, {**base, "seed": replayed}, script, budget)
            again = await play(ws, {**base, "seed": replayed}, script, budget)
            record(report, judge.seed_replay(replayed, first_run, again, why_not), evidence)
        tried = []
        for other_seed in (seed + 1, seed + 2, seed + 3):
            run = await play(ws, {**base, "seed": other_seed}, script, budget)
            tried.append(other_seed)
            if run.frames() != reference.frames():
                break
        differs = run.frames() != reference.frames()
        unseeded_same = False
        if not differs and not options.seed_dependent:
            unseeded = {key: value for key, value in base.items() if key != "seed"}
            shown = [await play(ws, unseeded, script, budget) for _ in range(2)]
            unseeded_same = shown[0].frames() == shown[1].frames() == reference.frames()
        decision = judge.seed_effect(seed, tried, differs, options.seed_dependent, unseeded_same)
        record(report, decision, evidence)
    finally:
        await finish(ws, ctx.timeout)


def _observation(reply: Reply) -> Any:
    """The observation of a reset reply; the whole data when the envelope nests none (judged elsewhere)."""
    if reply.kind != "observation" or not isinstance(reply.data, dict):
        return None
    nested = reply.data.get("observation")
    return nested if isinstance(nested, dict) else reply.data
