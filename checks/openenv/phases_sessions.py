"""Phases about sessions: capacity, closing, determinism and isolation, reset parameters, termination."""

from __future__ import annotations

import asyncio
from typing import Any

from checks.core import PhaseContext, summarize, truncate
from checks.openenv.episodes import EpisodeRun, finish, play, play_alone, play_group, session_with_grace
from checks.openenv.facts import action_plan, facts, load_schema
from checks.openenv.judging import error_problem, reward_of, state_problem
from checks.openenv.options import options_of
from checks.openenv.session import JsonSession, Reply, open_session
from checks.wire import Closed, HandshakeFailed, NoReply


async def capacity(ctx: PhaseContext) -> None:
    """Open sessions one by one, up to the group size plus one, until the server refuses one."""
    report, options = ctx.report, options_of(ctx)
    limit = options.group_size + 1
    sessions: list[JsonSession] = []
    refusal: Reply | None = None
    refused: JsonSession | None = None
    try:
        for index in range(limit):
            try:
                ws = await open_session(ctx, f"capacity probe session {index + 1}")
            except HandshakeFailed as exc:  # refusing the upgrade is a refusal too, judged below
                refusal = Reply(failure=f"the WebSocket handshake failed: {exc}")
                break
            sessions.append(ws)
            reply = await ws.reset(options.reset)
            if reply.kind != "observation":
                refusal, refused = reply, ws
                break
        accepted = len(sessions) - (refused is not None)
        evidence = [ws.transcript for ws in sessions]
        if refusal is None:
            report.unsupported(
                "openenv.capacity.reached", f"all {limit} sessions were accepted; no limit reached", evidence
            )
        elif not sessions:  # no session opened at all: there is no capacity to have reached
            report.error(
                "openenv.capacity.reached",
                f"no session could be opened: {refusal.describe()} (see openenv.ws.handshake)",
            )
        else:
            problem = error_problem(refusal, "CAPACITY_REACHED") or _counts_problem(refusal)
            closed = refusal.closed or (await _closed_soon(refused, ctx.timeout) if refused else None)
            if problem is None and (closed is None or closed.by != "target"):
                problem = "the refused session was not closed by the server"
            # The sessions end right after, so a silent one is this clause's finding, not a lost session.
            survivors = [await ws.state(judge_silence=True) for ws in sessions[:accepted]]
            if problem is None and any(state_problem(s) for s in survivors):
                problem = "a session already open stopped answering state after the refusal"
            report.check(
                problem is None,
                "openenv.capacity.reached",
                "CAPACITY_REACHED with integer active_sessions and max_sessions, then a close",
                problem or refusal.describe(),
                evidence,
            )
            facts(ctx).capacity = accepted
        shown = f"{accepted} concurrent sessions accepted"
        shown += f"; session {accepted + 1} got {refusal.describe()}" if refusal else f" (probed up to {limit})"
        report.info("openenv.capacity.probed", shown, evidence=evidence)
        report.check(
            accepted >= options.group_size,
            "openenv.capacity.group",
            f"at least {options.group_size} concurrent sessions (the group size)",
            shown,
            evidence,
        )
    finally:
        await asyncio.gather(*(finish(ws, ctx.timeout) for ws in sessions))


def _counts_problem(reply: Reply) -> str | None:
    data = reply.data
    for key in ("active_sessions", "max_sessions"):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{key} is {truncate(repr(value), 40)}, not an integer"
    return None


async def _closed_soon(ws: JsonSession, timeout: float) -> Closed | None:
    try:
        return await ws.socket.wait_closed(min(timeout, 2.0))
    except NoReply:
        return None


ENDINGS = ("close message", "WebSocket close", "dropped connection")


async def close(ctx: PhaseContext) -> None:
    """A close message ends the session cleanly, and every way of ending a session frees its slot."""
    report, options = ctx.report, options_of(ctx)
    ws = await open_session(ctx, "close message")
    await ws.reset(options.reset)
    closed, frames = await ws.close_by_message(ctx.timeout)
    await ws.close()
    report.check(
        closed is not None and closed.by == "target" and closed.code == 1000 and not frames,
        "openenv.close.clean",
        "no reply frame, then a server close with code 1000",
        _close_seen(closed, frames),
        ws.transcript,
    )

    # Hold all slots but one, so that each new session needs the slot the previous one freed.
    known_capacity = facts(ctx).capacity
    holders: list[JsonSession] = []
    try:
        for index in range(max(0, (known_capacity or 1) - 1)):
            holder = await open_session(ctx, f"slot holder {index + 1}")
            holders.append(holder)
            await holder.reset(options.reset)
        rounds = 2 * len(ENDINGS) if known_capacity else options.group_size + 1 + len(ENDINGS)
        previous = "nothing"
        for index in range(rounds):
            ending = ENDINGS[index % len(ENDINGS)]
            ws, reply, evidence = await session_with_grace(
                ctx, f"slot reuse {index + 1} after {previous}", options.reset
            )
            report.check(
                reply.kind == "observation",
                "openenv.close.frees-slot",
                f"a new session resets after the previous one ended by {previous}",
                reply.describe(),
                evidence,
            )
            if ws is None:
                return
            await _end(ws, ending, ctx.timeout)
            previous = ending
    finally:
        await asyncio.gather(*(finish(h, ctx.timeout) for h in holders))


def _close_seen(closed: Closed | None, frames: list[Reply]) -> str:
    if closed is None:
        return "the server kept the socket open"
    extra = f"; frames before the close: {', '.join(f.describe() for f in frames)}" if frames else ""
    return f"closed by {closed.by} with code {closed.code}{extra}"


async def _end(ws: JsonSession, ending: str, timeout: float) -> None:
    if ending == "close message":
        await finish(ws, timeout)
    elif ending == "WebSocket close":
        await ws.close()
    else:
        ws.drop()


async def group(ctx: PhaseContext) -> None:
    """Sequential and parallel runs of the scripted episode: identical inputs, identical frames."""
    report, options = ctx.report, options_of(ctx)
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        for clause_id in GROUP_CLAUSES:
            report.error(clause_id, "no valid action to script an episode with")
        return
    script, budget, size = plan.valid, options.max_steps, options.group_size

    first = await play_alone(ctx, "scripted episode, alone (1)", options.reset, script, budget)
    second = await play_alone(ctx, "scripted episode, alone (2)", options.reset, script, budget)
    deterministic = first.frames() == second.frames()
    report.check(
        deterministic,
        "openenv.determinism.sequential",
        "identical frames in both runs",
        _difference(first, second) if not deterministic else f"{len(first.frames())} frames identical",
        [first.transcript, second.transcript],
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
        for clause_id in ("openenv.determinism.group", "openenv.isolation.sessions"):
            report.error(
                clause_id, f"the group could not run: {refused.describe()} (see openenv.capacity.group)", evidence
            )
        return
    odd_one = next((run for run in runs if run.frames() != runs[0].frames()), None)
    report.check(
        odd_one is None,
        "openenv.determinism.group",
        f"{size} identical sessions give identical frames",
        f"final rewards {[run.final_reward for run in runs]}"
        + (f"; {_difference(runs[0], odd_one)}" if odd_one else ""),
        evidence,
    )
    _expect_reward(ctx, runs)

    # Isolation: each session gets its own episode id, seed, task and action order.
    resets = [_variant_reset(options.reset, options.contrast_task_id, index) for index in range(size)]
    scripts = [script[index % len(script) :] + script[: index % len(script)] for index in range(size)]
    alone = [
        await play_alone(ctx, f"isolation variant {i + 1}, alone", resets[i], scripts[i], budget) for i in range(size)
    ]
    together = await play_group(ctx, "isolation group", resets, scripts, budget)
    mismatches = []
    for index, (solo, shared) in enumerate(zip(alone, together)):
        frames_agree = solo.frames() == shared.frames() or not deterministic
        if not frames_agree or solo.state_summary() != shared.state_summary():
            mismatches.append(f"session {index + 1}: {_difference(solo, shared, with_state=True)}")
    report.check(
        not mismatches,
        "openenv.isolation.sessions",
        "each parallel session sees what it sees alone"
        + ("" if deterministic else " (episode id and step count only: the env is not deterministic)"),
        "; ".join(mismatches[:2]) or f"{size} sessions agree with their solo runs",
        [run.transcript for run in alone + together],
    )


GROUP_CLAUSES = (
    "openenv.determinism.sequential",
    "openenv.determinism.group",
    "openenv.isolation.sessions",
    "openenv.replay.expected-reward",
)


def _variant_reset(base: dict[str, Any], contrast_task_id: str | None, index: int) -> dict[str, Any]:
    variant = {**base, "episode_id": f"rlconform-isolation-{index + 1}"}
    if isinstance(base.get("seed"), int) and not isinstance(base.get("seed"), bool):
        variant["seed"] = base["seed"] + index
    if contrast_task_id is not None and "task_id" in base and index % 2:
        variant["task_id"] = contrast_task_id
    return variant


def _difference(a: EpisodeRun, b: EpisodeRun, with_state: bool = False) -> str:
    for index, (x, y) in enumerate(zip(a.frames(), b.frames())):
        if x != y:
            return f"frame {index + 1} differs: {summarize(x, 150)} vs {summarize(y, 150)}"
    if len(a.frames()) != len(b.frames()):
        return f"{len(a.frames())} vs {len(b.frames())} frames"
    if with_state and a.state_summary() != b.state_summary():
        return f"state (episode_id, step_count) {a.state_summary()} vs {b.state_summary()}"
    return "identical"


def _expect_reward(ctx: PhaseContext, runs: list[EpisodeRun]) -> None:
    expected = options_of(ctx).expected_reward
    if expected is None:
        ctx.report.unsupported("openenv.replay.expected-reward", "the target declares no expected_reward")
        return
    for run in runs:
        ctx.report.check(
            run.done and run.final_reward == expected,
            "openenv.replay.expected-reward",
            f"done with reward {expected}",
            run.describe(),
            run.transcript,
        )


async def reset(ctx: PhaseContext) -> None:
    """task_id and seed in the reset data change what the episode shows; a seed replays its episode."""
    report, options = ctx.report, options_of(ctx)
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
                f"different first observations for task {base['task_id']!r} and {options.contrast_task_id!r}",
                f"{summarize(first, 120)} vs {summarize(second, 120)}",
                ws.transcript,
            )
        seed = base.get("seed")
        if isinstance(seed, bool) or not isinstance(seed, int):
            report.unsupported("openenv.reset.seed", "the reset data sets no integer seed")
            report.unsupported("openenv.reset.seed-replay", "the reset data sets no integer seed")
            return
        plan = action_plan(options, await load_schema(ctx))
        script = plan.valid
        reference = await play(ws, base, script, options.max_steps)
        # Back to back in one session: an RNG made once per session, or a falsy-seed test
        # (`if seed:`) that skips seed 0, shows as a replay that drifts.
        for replayed in dict.fromkeys((seed, 0)):
            first = (
                reference if replayed == seed else await play(ws, {**base, "seed": replayed}, script, options.max_steps)
            )
            again = await play(ws, {**base, "seed": replayed}, script, options.max_steps)
            report.check(
                again.frames() == first.frames(),
                "openenv.reset.seed-replay",
                f"seed {replayed} played twice in one session gives the same frames",
                _difference(first, again),
                ws.transcript,
            )
        tried = []
        for other_seed in (seed + 1, seed + 2, seed + 3):
            run = await play(ws, {**base, "seed": other_seed}, script, options.max_steps)
            tried.append(other_seed)
            if run.frames() != reference.frames():
                break
        differs = run.frames() != reference.frames()
        report.check(
            differs,
            "openenv.reset.seed",
            f"some seed other than {seed} changes the frames",
            f"seed {tried[-1]} changed the frames" if differs else f"seeds {tried} changed no frame",
            ws.transcript,
        )
    finally:
        await finish(ws, ctx.timeout)


def _observation(reply: Reply) -> Any:
    """The observation of a reset reply; the whole data when the envelope nests none (judged elsewhere)."""
    if reply.kind != "observation" or not isinstance(reply.data, dict):
        return None
    nested = reply.data.get("observation")
    return nested if isinstance(nested, dict) else reply.data


async def termination(ctx: PhaseContext) -> None:
    """The scripted episode ends within the declared maximum; a step after done is recorded."""
    report, options = ctx.report, options_of(ctx)
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        report.error("openenv.termination.within-budget", "no valid action to script an episode with")
        return
    ws = await open_session(ctx, "scripted episode to the end")
    try:
        run = await play(ws, options.reset, plan.valid, options.max_steps)
        report.check(
            run.done,
            "openenv.termination.within-budget",
            f"done within {options.max_steps} steps",
            run.describe(),
            ws.transcript,
        )
        if run.done:
            after = await ws.step(plan.valid[0])
            report.info(
                "openenv.termination.after-done",
                f"{after.kind or 'no'} frame, reward {reward_of(after)!r}: {after.describe()}",
                evidence=ws.transcript,
            )
        else:
            report.unsupported("openenv.termination.after-done", "the episode never ended", ws.transcript)
    finally:
        await finish(ws, ctx.timeout)
