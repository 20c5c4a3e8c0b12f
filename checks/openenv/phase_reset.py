"""task_id and seed in the reset data change what the episode shows; a seed replays its episode."""

from __future__ import annotations

from typing import Any

from checks.core import summarize
from checks.openenv.episodes import difference, finish, play
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.options import Ctx
from checks.openenv.session import Reply, open_session


async def reset_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    base = options.reset
    ws = await open_session(ctx, "reset parameters")
    try:
        if "task_id" not in base:
            report.unsupported("openenv.reset.task-id", "the reset data sets no task_id")
        elif options.contrast_task_id is None:
            report.unsupported("openenv.reset.task-id", "the target declares no contrast_task_id")
        else:
            one = await ws.reset(base)
            other = await ws.reset({**base, "task_id": options.contrast_task_id})
            first, second = _observation(one), _observation(other)
            report.check(
                first is not None and second is not None and first != second,
                "openenv.reset.task-id",
                expected=f"different first observations for task {base['task_id']!r} and {options.contrast_task_id!r}",
                actual=f"{summarize(first, 120)} vs {summarize(second, 120)}",
                evidence=ws.transcript,
            )
        seed = base.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int):
            report.unsupported("openenv.reset.seed", "the reset data sets no integer seed")
            report.unsupported("openenv.reset.seed-replay", "the reset data sets no integer seed")
            return
        script = action_plan(options, await load_schema(ctx)).valid
        budget = options.step_budget
        reference = await play(ws, base, script, budget)
        # Back to back in one session: an RNG made once per session, or a falsy-seed test
        # (`if seed:`) that skips seed 0, shows as a replay that drifts.
        for replayed in dict.fromkeys((seed, 0)):
            first_run = reference if replayed == seed else await play(ws, {**base, "seed": replayed}, script, budget)
            again = await play(ws, {**base, "seed": replayed}, script, budget)
            report.check(
                again.frames() == first_run.frames(),
                "openenv.reset.seed-replay",
                expected=f"seed {replayed} played twice in one session gives the same frames",
                actual=difference(first_run, again),
                evidence=ws.transcript,
            )
        tried = []
        for other_seed in (seed + 1, seed + 2, seed + 3):
            run = await play(ws, {**base, "seed": other_seed}, script, budget)
            tried.append(other_seed)
            if run.frames() != reference.frames():
                break
        differs = run.frames() != reference.frames()
        if not differs and not options.seed_dependent:
            unseeded = {key: value for key, value in base.items() if key != "seed"}
            shown = [await play(ws, unseeded, script, budget) for _ in range(2)]
            if shown[0].frames() == shown[1].frames() == reference.frames():
                report.info(
                    "openenv.reset.seed",
                    actual=f"not judged: seeds {[seed, *tried]} and no seed all play the same episode, so "
                    "nothing shows the env depends on a seed (a target declares seed_dependent to judge it)",
                    evidence=ws.transcript,
                )
                return
        report.check(
            differs,
            "openenv.reset.seed",
            expected=f"some seed other than {seed} changes the frames",
            actual=f"seed {tried[-1]} changed the frames" if differs else f"seeds {tried} changed no frame",
            evidence=ws.transcript,
        )
    finally:
        await finish(ws, ctx.timeout)


def _observation(reply: Reply) -> Any:
    """The observation of a reset reply; the whole data when the envelope nests none (judged elsewhere)."""
    if reply.kind != "observation" or not isinstance(reply.data, dict):
        return None
    nested = reply.data.get("observation")
    return nested if isinstance(nested, dict) else reply.data
