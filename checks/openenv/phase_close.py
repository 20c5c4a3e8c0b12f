"""A close message ends the session cleanly, and every way of ending a session frees its slot."""

from __future__ import annotations

import asyncio

from checks.errors import PeerClosed
from checks.openenv.episodes import finish, session_with_grace
from checks.openenv.options import Ctx, group_size
from checks.openenv.session import JsonSession, Reply, open_session

ENDINGS = ("close message", "WebSocket close", "dropped connection")


async def close_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    ws = await open_session(ctx, "close message")
    await ws.reset(options.reset)
    closed, frames = await ws.close_by_message(ctx.timeout)
    await ws.close()
    report.check(
        closed is not None and closed.by == "peer" and closed.code == 1000 and not frames,
        "openenv.close.clean",
        expected="no reply frame, then a server close with code 1000",
        actual=_close_seen(closed, frames),
        evidence=ws.transcript,
    )

    # Hold all slots but one, so that each new session needs the slot the previous one freed.
    known_capacity = ctx.state.capacity
    holders: list[JsonSession] = []
    try:
        for index in range(max(0, (known_capacity or 1) - 1)):
            holder = await open_session(ctx, f"slot holder {index + 1}")
            holders.append(holder)
            await holder.reset(options.reset)
        rounds = 2 * len(ENDINGS) if known_capacity else group_size(ctx) + 1 + len(ENDINGS)
        previous = "nothing"
        for index in range(rounds):
            ending = ENDINGS[index % len(ENDINGS)]
            reused, reply, evidence = await session_with_grace(
                ctx, f"slot reuse {index + 1} after {previous}", options.reset
            )
            report.check(
                reply.kind == "observation",
                "openenv.close.frees-slot",
                expected=f"a new session resets after the previous one ended by {previous}",
                actual=reply.describe(),
                evidence=evidence,
            )
            if reused is None:
                return
            await _end(reused, ending, ctx.timeout)
            previous = ending
    finally:
        await asyncio.gather(*(finish(h, ctx.timeout) for h in holders))


def _close_seen(closed: PeerClosed | None, frames: list[Reply]) -> str:
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
