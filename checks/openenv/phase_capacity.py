"""Open sessions one by one, up to the group size plus one, until the server refuses one."""

from __future__ import annotations

import asyncio

from checks.core import NoReply
from checks.decision import error, info, record, unsupported
from checks.errors import PeerClosed, Refused
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish
from checks.openenv.options import DEFAULT_GROUP_SIZE, Ctx
from checks.openenv.session import JsonSession, Reply, connect_session


async def capacity_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    wanted = options.group_size or DEFAULT_GROUP_SIZE
    limit = wanted + 1
    sessions: list[JsonSession] = []
    refusal: Reply | None = None
    refused: JsonSession | None = None
    try:
        for index in range(limit):
            try:
                ws = await connect_session(ctx, f"capacity probe session {index + 1}")
            except Refused as exc:  # refusing the upgrade is a refusal too, judged below
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
            why = f"all {limit} sessions were accepted; no limit reached"
            record(report, unsupported("openenv.capacity.reached", why), evidence)
        elif not sessions:  # no session opened at all: there is no capacity to have reached
            why = f"no session could be opened: {refusal.describe()} (see openenv.ws.handshake)"
            record(report, error("openenv.capacity.reached", why))
        else:
            closed = refusal.closed or (await _closed_soon(refused, ctx.timeout) if refused else None)
            # The sessions end right after, so a silent one is this clause's finding, not a lost session.
            survivors = [await ws.state(judge_silence=True) for ws in sessions[:accepted]]
            record(report, judge.capacity_reached(refusal, closed, survivors), evidence)
            ctx.state.capacity = accepted
        shown = f"{accepted} concurrent sessions accepted"
        shown += f"; session {accepted + 1} got {refusal.describe()}" if refusal else f" (probed up to {limit})"
        record(report, info("openenv.capacity.probed", actual=shown), evidence)
        decision = judge.capacity_group(options.group_size, accepted, shown, min(wanted, accepted))
        record(report, decision, evidence)
    finally:
        await asyncio.gather(*(finish(ws, ctx.timeout) for ws in sessions))


async def _closed_soon(ws: JsonSession, timeout: float) -> PeerClosed | None:
    try:
        closed, _ = await ws.socket.wait_closed(min(timeout, 2.0))
        return closed
    except NoReply:
        return None
