"""Phases that load the server: latency figures, and survival of hostile input (run last)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from checks.core import PhaseContext, TargetUnreachable, Transcript, percentile, seconds, truncate
from checks.openenv.episodes import finish, session_with_grace
from checks.openenv.facts import action_plan, facts, load_schema
from checks.openenv.http_probe import HttpProbe
from checks.openenv.options import options_of
from checks.openenv.session import JsonSession, open_session, settle_all
from checks.wire import HandshakeFailed


async def _round_trips(ws: JsonSession, reset: dict[str, Any], action: Any, rounds: int) -> list[float]:
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        await ws.reset(reset)
        await ws.step(action)
        timings.append(time.perf_counter() - started)
    return timings


async def latency(ctx: PhaseContext) -> None:
    """Reset+step round trips on one socket, then on every socket of a parallel group."""
    report, options = ctx.report, options_of(ctx)
    plan = action_plan(options, await load_schema(ctx))
    if not plan.valid:
        for clause_id in ("openenv.latency.figures", "openenv.latency.bound"):
            report.error(clause_id, "no valid action to step with")
        return
    action, rounds = plan.valid[0], options.latency_rounds
    ws = await open_session(ctx, "latency, one socket")
    try:
        alone = await _round_trips(ws, options.reset, action, rounds)
    finally:
        await finish(ws, ctx.timeout)

    size = min(options.group_size, facts(ctx).capacity or options.group_size)
    sessions: list[JsonSession] = []
    try:
        for index in range(size):
            sessions.append(await open_session(ctx, f"latency, group session {index + 1}"))
        per_session = await settle_all(*(_round_trips(s, options.reset, action, rounds) for s in sessions))
    finally:
        await asyncio.gather(*(finish(s, ctx.timeout) for s in sessions))
    together = [t for timings in per_session for t in timings]
    evidence: list[Transcript] = [ws.transcript] + [s.transcript for s in sessions]
    single, group_p99 = percentile(alone, 0.5), percentile(together, 0.99)
    report.info(
        "openenv.latency.figures",
        f"one socket: reset+step median {seconds(single)}, p99 {seconds(percentile(alone, 0.99))} "
        f"over {len(alone)}; {size} parallel sessions: reset+step p99 {seconds(group_p99)} "
        f"over {len(together)}",
        evidence=evidence,
    )
    bound = options.latency_bound_ms
    if bound is None:
        report.unsupported("openenv.latency.bound", "the target sets no latency_bound_ms")
        return
    report.check(
        single * 1000 <= bound and group_p99 * 1000 <= bound,
        "openenv.latency.bound",
        f"median and group p99 within {bound:g} ms",
        f"median {seconds(single)}, group p99 {seconds(group_p99)}",
        evidence,
    )


HOSTILE_FRAMES: tuple[tuple[str, str | bytes, bool], ...] = (
    # (what, frame, whether the session's ending is judged by openenv.survive.clean-end)
    ("non-object JSON", "[1, 2, 3]", True),
    ("JSON null", "null", True),
    ("a binary frame", b'{"type": "state"}', True),
)


async def survive(ctx: PhaseContext) -> None:
    """Hostile frames and disconnects, each followed by /health and a bystander session's state."""
    report, options = ctx.report, options_of(ctx)
    short = min(ctx.timeout, 2.0)
    health = HttpProbe(ctx.url, report.transcript("health during hostile input"), ctx.timeout)
    evidence: list[Transcript] = [health.transcript]
    bystander: JsonSession | None = None
    problems: list[str] = []
    # Survival means no change: a /health that was already unhealthy is openenv.discover.health's finding.
    baseline = (await health.get("/health")).status

    async def still_healthy(after: str) -> bool:
        try:
            reply = await health.get("/health")
        except TargetUnreachable as exc:
            problems.append(f"after {after}: the server no longer accepts connections ({truncate(str(exc), 80)})")
            return False
        if reply.status != baseline:
            problems.append(f"after {after}: /health answered {reply.describe()}, before it answered {baseline}")
        # A bystander that fell silent was closed then; its silence is already one of the problems.
        if bystander is not None and bystander.lost is None:
            state = await bystander.state(judge_silence=True)
            if state.kind != "state":
                problems.append(f"after {after}: the bystander session got {state.describe()}")
        return reply.status == baseline

    async def hostile_session(label: str) -> JsonSession | None:
        try:
            ws = await open_session(ctx, label)
        except (TargetUnreachable, HandshakeFailed) as exc:
            if len(evidence) == 1:  # not one session yet, so nothing hostile was sent: survival is untested
                raise NoSessionToStart(f"{label}: could not connect ({truncate(str(exc), 80)})") from None
            problems.append(f"{label}: could not connect ({truncate(str(exc), 80)})")
            return None
        evidence.append(ws.transcript)
        return ws

    try:
        if facts(ctx).capacity != 1:
            bystander = await hostile_session("bystander session")
            if bystander is not None:
                await bystander.reset(options.reset)
        frames = HOSTILE_FRAMES + (("an oversized text frame", "x" * options.oversize_bytes, False),)
        for what, frame, judged in frames:
            ws = await hostile_session(f"hostile: {what}")
            if ws is None:
                break
            await ws.reset(options.reset)
            await ws.send_raw(frame, f"{what} ({len(frame)} bytes)")
            first = await ws.listen(short)
            # Silence here is the hostile input's effect, judged by clean-end: the session is not used again.
            follow = first if first.closed is not None else await ws.state(judge_silence=True)
            if judged:
                closed = ws.socket.closed
                ended_cleanly = (
                    first.code == "SESSION_ERROR"
                    and closed is not None
                    and closed.by == "target"
                    and closed.code == 1000
                )
                report.check(
                    follow.kind == "state" or ended_cleanly,
                    "openenv.survive.clean-end",
                    f"after {what}: SESSION_ERROR and close 1000, or a usable session",
                    f"{first.describe()}; then {follow.describe()}",
                    ws.transcript,
                )
            await ws.close()
            if not await still_healthy(what):
                break
        else:
            ws = await hostile_session("hostile: dropped mid-request")
            if ws is not None:
                await ws.send({"type": "reset", "data": dict(options.reset)})
                ws.drop()
                await still_healthy("a connection dropped mid-request")
            burst = max(1, (facts(ctx).capacity or options.group_size) - (bystander is not None))
            await asyncio.gather(*(_bad_session(hostile_session, index, short) for index in range(burst)))
            # Without a bystander (one-session servers), a fresh session is the proof sessions still work.
            if await still_healthy(f"a burst of {burst} bad sessions") and bystander is None:
                fresh, reply, tried = await session_with_grace(ctx, "fresh session after hostile input", options.reset)
                evidence.extend(tried)
                if fresh is None:
                    problems.append(f"a fresh session could not reset: {reply.describe()}")
                else:
                    await finish(fresh, ctx.timeout)
        report.check(
            not problems,
            "openenv.survive.hostile",
            "/health as before and sessions still working after every hostile input",
            "; ".join(problems[:3]) or "the server and its sessions kept working",
            evidence,
        )
    except NoSessionToStart as exc:
        for clause_id in ("openenv.survive.hostile", "openenv.survive.clean-end"):
            report.error(clause_id, f"no session opened before any hostile input: {exc}", evidence)
    finally:
        if bystander is not None:
            await finish(bystander, ctx.timeout)
        await health.close()


class NoSessionToStart(Exception):
    """Not one /ws session opened, so no hostile input could be sent at all."""


async def _bad_session(open_hostile, index: int, short: float) -> None:
    ws = await open_hostile(f"hostile: burst session {index + 1}")
    if ws is None:
        return
    await ws.send_raw("{not json", "malformed JSON")
    await ws.send_raw("[]", "non-object JSON")
    await ws.listen(short)
    ws.drop()
