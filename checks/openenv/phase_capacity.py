"""Open sessions one by one, up to the group size plus one, until the server refuses one."""

from __future__ import annotations

import asyncio

from checks.core import NoReply, truncate
from checks.errors import PeerClosed, Refused
from checks.openenv.episodes import finish
from checks.openenv.judging import error_problem, state_problem
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
            if problem is None and (closed is None or closed.by != "peer"):
                problem = "the refused session was not closed by the server"
            # The sessions end right after, so a silent one is this clause's finding, not a lost session.
            survivors = [await ws.state(judge_silence=True) for ws in sessions[:accepted]]
            if problem is None and any(state_problem(s) for s in survivors):
                problem = "a session already open stopped answering state after the refusal"
            report.check(
                problem is None,
                "openenv.capacity.reached",
                expected="CAPACITY_REACHED with integer active_sessions and max_sessions, then a close",
                actual=problem or refusal.describe(),
                evidence=evidence,
            )
            ctx.state.capacity = accepted
        shown = f"{accepted} concurrent sessions accepted"
        shown += f"; session {accepted + 1} got {refusal.describe()}" if refusal else f" (probed up to {limit})"
        report.info("openenv.capacity.probed", actual=shown, evidence=evidence)
        if options.group_size is None:
            report.info(
                "openenv.capacity.group",
                actual=f"not judged: the target declares no group_size; the group runs with "
                f"{min(wanted, accepted)} sessions ({shown})",
                evidence=evidence,
            )
        else:
            report.check(
                accepted >= options.group_size,
                "openenv.capacity.group",
                expected=f"at least {options.group_size} concurrent sessions (the group size)",
                actual=shown,
                evidence=evidence,
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


async def _closed_soon(ws: JsonSession, timeout: float) -> PeerClosed | None:
    try:
        closed, _ = await ws.socket.wait_closed(min(timeout, 2.0))
        return closed
    except NoReply:
        return None
