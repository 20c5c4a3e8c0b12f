"""The scripted episode alone twice, as an identical parallel group, and as a group of variants."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped
from checks.openenv.episodes import EpisodeRun, difference, play_alone, play_group
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import judge_rewards
from checks.openenv.options import Ctx, group_size


async def group_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        raise PhaseStopped("no valid action to script an episode with")
    script, budget, size = plan.valid, options.step_budget, group_size(ctx)

    first = await play_alone(ctx, "scripted episode, alone (1)", options.reset, script, budget)
    second = await play_alone(ctx, "scripted episode, alone (2)", options.reset, script, budget)
    _judge_rewards(ctx, [first, second])
    deterministic = first.frames() == second.frames()
    report.check(
        deterministic,
        "openenv.determinism.sequential",
        expected="identical frames in both runs",
        actual=difference(first, second) if not deterministic else f"{len(first.frames())} frames identical",
        evidence=[first.transcript, second.transcript],
    )
    _expect_reward(ctx, [first, second])

    if size < 2:
        for clause_id in ("openenv.determinism.group", "openenv.isolation.sessions"):
            report.unsupported(clause_id, "the group size is 1")
        return
    runs = await play_group(ctx, "identical group", [options.reset] * size, [script] * size, budget)
    evidence = [run.transcript for run in runs]
    if any(run.refused for run in runs):
        refused = next(run for run in runs if run.refused)
        raise PhaseStopped(f"the group could not run: {refused.describe()} (see openenv.capacity.group)", evidence)
    _judge_rewards(ctx, runs)
    odd_one = next((run for run in runs if run.frames() != runs[0].frames()), None)
    report.check(
        odd_one is None,
        "openenv.determinism.group",
        expected=f"{size} identical sessions give identical frames",
        actual=f"final rewards {[run.final_reward for run in runs]}"
        + (f"; {difference(runs[0], odd_one)}" if odd_one else ""),
        evidence=evidence,
    )
    _expect_reward(ctx, runs)

    # Isolation: each session gets its own episode id, seed, task and action order.
    resets = [_variant_reset(options.reset, options.contrast_task_id, index) for index in range(size)]
    scripts = [script[index % len(script) :] + script[: index % len(script)] for index in range(size)]
    alone = [
        await play_alone(ctx, f"isolation variant {i + 1}, alone", resets[i], scripts[i], budget) for i in range(size)
    ]
    together = await play_group(ctx, "isolation group", resets, scripts, budget)
    _judge_rewards(ctx, alone + together)
    mismatches = []
    for index, (solo, shared) in enumerate(zip(alone, together, strict=True)):
        frames_agree = solo.frames() == shared.frames() or not deterministic
        if not frames_agree or solo.state_summary() != shared.state_summary():
            mismatches.append(f"session {index + 1}: {difference(solo, shared, with_state=True)}")
    report.check(
        not mismatches,
        "openenv.isolation.sessions",
        expected="each parallel session sees what it sees alone"
        + ("" if deterministic else " (episode id and step count only: the env is not deterministic)"),
        actual="; ".join(mismatches[:2]) or f"{size} sessions agree with their solo runs",
        evidence=[run.transcript for run in alone + together],
    )


def _variant_reset(base: dict[str, Any], contrast_task_id: str | None, index: int) -> dict[str, Any]:
    variant = {**base, "episode_id": f"rlconform-isolation-{index + 1}"}
    if isinstance(base.get("seed"), int) and not isinstance(base.get("seed"), bool):
        variant["seed"] = base["seed"] + index
    if contrast_task_id is not None and "task_id" in base and index % 2:
        variant["task_id"] = contrast_task_id
    return variant


def _judge_rewards(ctx: Ctx, runs: list[EpisodeRun]) -> None:
    for run in runs:
        judge_rewards(ctx.report, run.steps, ctx.options, run.transcript)


def _expect_reward(ctx: Ctx, runs: list[EpisodeRun]) -> None:
    expected = ctx.options.expected_reward
    if expected is None:
        ctx.report.unsupported("openenv.replay.expected-reward", "the target declares no expected_reward")
        return
    for run in runs:
        ctx.report.check(
            run.done and run.final_reward == expected,
            "openenv.replay.expected-reward",
            expected=f"done with reward {expected}",
            actual=run.describe(),
            evidence=run.transcript,
        )
