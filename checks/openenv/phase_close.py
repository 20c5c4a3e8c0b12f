"""A close message ends the session cleanly, and every way of ending a session frees its slot."""

from __future__ import annotations

import asyncio

from checks.decision import record
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish, session_with_grace
from checks.openenv.options import Ctx, group_size
from checks.openenv.session import JsonSession, open_session

ENDINGS = ("close message", "WebSocket close", "dropped connection")


async def close_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    ws = await open_session(ctx, "close message")
    await ws.reset(options.reset)
    closed, frames = await ws.close_by_message(ctx.timeout)
    await ws.close()
    record(report, judge.close_clean(closed, frames), ws.transcript)

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
            record(report, judge.frees_slot(reply, previous), evidence)
            if reused is None:
                return
            await _end(reused, ending, ctx.timeout)
            previous = ending
    finally:
        await asyncio.gather(*(finish(h, ctx.timeout) for h in holders))


async def _end(ws: JsonSession, ending: str, timeout: float) -> None:
    if ending == "close message":
        await finish(ws, timeout)
    elif ending == "WebSocket close":
        await ws.close()
    else:
        ws.drop()
