"""The scripted episode alone twice, as an identical parallel group, and as a group of variants."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped
from checks.decision import record
from checks.openenv import judging_episodes as judge
from checks.openenv.episodes import EpisodeRun, play_alone, play_group
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import reward_decisions, rewards_seen
from checks.openenv.options import Ctx, group_size


async def group_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        raise PhaseStopped("no valid action to script an episode with")
    script, budget, size = plan.valid, options.step_budget, group_size(ctx)

    first = await play_alone(ctx, "scripted episode, alone (1)", options.reset, script, budget)
    second = await play_alone(ctx, "scripted episode, alone (2)", options.reset, script, budget)
    played = [first, second]
    _judge_rewards(ctx, played)
    if judge.sent_seed(options.reset) is not None:
        ctx.state.seed_shown = judge.seed_shown([first.reset, second.reset])
    why_not = judge.why_unrepeatable(options, ctx.state.seed_shown)
    record(report, judge.sequential(first, second, why_not), [first.transcript, second.transcript])
    _expect_reward(ctx, played)

    try:
        if size < 2:
            record(report, judge.group_unsupported())
            return
        runs = await play_group(ctx, "identical group", [options.reset] * size, [script] * size, budget)
        played += runs
        if any(run.refused for run in runs):
            refused = next(run for run in runs if run.refused)
            evidence = [run.transcript for run in runs]
            raise PhaseStopped(f"the group could not run: {refused.describe()} (see openenv.capacity.group)", evidence)
        _judge_rewards(ctx, runs)
        record(report, judge.group(runs, why_not), [run.transcript for run in runs])
        _expect_reward(ctx, runs)

        # Isolation: each session gets its own episode id, seed, task and action order.
        resets = [_variant_reset(options.reset, options.contrast_task_id, index) for index in range(size)]
        scripts = [script[index % len(script) :] + script[: index % len(script)] for index in range(size)]
        alone = [
            await play_alone(ctx, f"isolation variant {i + 1}, alone", resets[i], scripts[i], budget)
            for i in range(size)
        ]
        together = await play_group(ctx, "isolation group", resets, scripts, budget)
        played += alone + together
        _judge_rewards(ctx, alone + together)
        unequal = "the scripted episode played alone twice gave different frames (openenv.determinism.sequential)"
        frames_why_not = why_not or (unequal if first.frames() != second.frames() else None)
        evidence = [run.transcript for run in alone + together]
        sent_ids = [reset.get("episode_id") for reset in resets]
        record(report, judge.isolation(alone, together, frames_why_not, sent_ids), evidence)
    finally:
        steps = [step for run in played for step in run.steps]
        record(report, rewards_seen(steps, options), [run.transcript for run in played])


def _variant_reset(base: dict[str, Any], contrast_task_id: str | None, index: int) -> dict[str, Any]:
    variant = {**base, "episode_id": f"rlconform-isolation-{index + 1}"}
    if isinstance(base.get("seed"), int) and not isinstance(base.get("seed"), bool):
        variant["seed"] = base["seed"] + index
    if contrast_task_id is not None and "task_id" in base and index % 2:
        variant["task_id"] = contrast_task_id
    return variant


def _judge_rewards(ctx: Ctx, runs: list[EpisodeRun]) -> None:
    for run in runs:
        for step in run.steps:
            record(ctx.report, reward_decisions(step, ctx.options, on_reset=False), run.transcript)


def _expect_reward(ctx: Ctx, runs: list[EpisodeRun]) -> None:
    for run in runs:
        record(ctx.report, judge.expected_reward(ctx.options, run), run.transcript)
