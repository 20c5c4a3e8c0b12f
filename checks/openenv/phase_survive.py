"""Hostile frames, disconnects and a burst of bad sessions; the server and a bystander must live on (run last)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from checks.core import PhaseStopped, TargetUnreachable, Transcript, truncate
from checks.openenv.episodes import finish, session_with_grace
from checks.openenv.http_probe import HttpProbe
from checks.openenv.options import Ctx
from checks.openenv.session import JsonSession, connect_session
from checks.wire import HandshakeFailed

HOSTILE_FRAMES: tuple[tuple[str, str | bytes, bool], ...] = (
    # (what, frame, whether the session's ending is judged by openenv.survive.clean-end)
    ("non-object JSON", "[1, 2, 3]", True),
    ("JSON null", "null", True),
    ("a binary frame", b'{"type": "state"}', True),
)


async def survive_phase(ctx: Ctx) -> None:
    """Each hostile input is followed by /health and a bystander session's state."""
    report, options = ctx.report, ctx.options
    short = min(ctx.timeout, 2.0)
    health = HttpProbe(ctx.url, report.transcript("health during hostile input"), ctx.timeout, ctx.options)
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
            ws = await connect_session(ctx, label)
        except (TargetUnreachable, HandshakeFailed) as exc:
            why = f"{label}: could not connect ({truncate(str(exc), 80)})"
            if len(evidence) == 1:  # not one session yet, so nothing hostile was sent: survival is untested
                raise PhaseStopped(f"no session opened before any hostile input: {why}", list(evidence)) from None
            problems.append(why)
            return None
        evidence.append(ws.transcript)
        return ws

    try:
        if ctx.state.capacity != 1:
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
                    expected=f"after {what}: SESSION_ERROR and close 1000, or a usable session",
                    actual=f"{first.describe()}; then {follow.describe()}",
                    evidence=ws.transcript,
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
            burst = max(1, (ctx.state.capacity or options.group_size) - (bystander is not None))
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
            expected="/health as before and sessions still working after every hostile input",
            actual="; ".join(problems[:3]) or "the server and its sessions kept working",
            evidence=evidence,
        )
    finally:
        if bystander is not None:
            await finish(bystander, ctx.timeout)
        await health.close()


async def _bad_session(open_hostile: Callable[[str], Awaitable[JsonSession | None]], index: int, short: float) -> None:
    ws = await open_hostile(f"hostile: burst session {index + 1}")
    if ws is None:
        return
    await ws.send_raw("{not json", "malformed JSON")
    await ws.send_raw("[]", "non-object JSON")
    await ws.listen(short)
    ws.drop()
