"""OpenEnv 0.10's `/ws?session_id=`: a WebSocket attached to an HTTP MCP session, detected and never assumed.

Judged only where the wire shows 0.10 (0.3 ignores the query and opens a fresh
session) and POST /mcp `openenv/session/create` answers a session id. That
session holds a concurrency slot until `openenv/session/close` (the default
capacity is one), so whatever happens the phase closes it before it ends.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

from checks.core import Transcript
from checks.decision import record, unsupported
from checks.errors import Refused, TargetUnreachable
from checks.http_client import HttpClient, Reply
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import SLOT_GRACE_PAUSE, SLOT_GRACE_TRIES, finish, session_with_grace
from checks.openenv.facts import markers_010
from checks.openenv.options import Ctx
from checks.openenv.session import Reply as Frame
from checks.openenv.session import connect_session

ATTACH_CLAUSES = (
    "openenv.attach.session",
    "openenv.attach.unknown-id",
    "openenv.attach.single",
    "openenv.attach.close",
)
NOT_SERVED = (404, 405)
SERVER_BUSY = -32000  # JSON-RPC "server error": OpenEnv's answer at capacity
INVALID_PARAMS = -32602
UNKNOWN_ID = "rlconform-no-such-session"
EPISODE = "rlconform-attached"


async def attach_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with HttpClient(ctx.url, report.transcript("HTTP MCP session"), ctx.timeout, ctx.options) as http:
        markers = await markers_010(ctx)
        if not markers:
            _unsupported(ctx, "the wire shows no openenv 0.10 marker (0.3 ignores session_id)", http.transcript)
            return
        session_id = await _create(ctx, http)
        if session_id is None:
            return
        try:
            await _unknown_id(ctx)
            await _attached(ctx, session_id)
        finally:
            closed = await _rpc(http, "openenv/session/close", {"session_id": session_id})
        await _judge_close(ctx, closed, http.transcript)


def _unsupported(ctx: Ctx, why: str, evidence: Transcript) -> None:
    clause_ids = (*ATTACH_CLAUSES, "openenv.ws.reply-in-time")  # no /ws session is opened here either
    record(ctx.report, [unsupported(clause_id, why) for clause_id in clause_ids], evidence)


async def _rpc(http: HttpClient, method: str, params: dict[str, Any]) -> Reply:
    return await http.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


def _member(reply: Reply, key: str) -> Any:
    body = reply.body if reply.is_json and isinstance(reply.body, dict) else {}
    value = body.get(key)
    return value if isinstance(value, dict) else {}


async def _create(ctx: Ctx, http: HttpClient) -> str | None:
    """A new HTTP MCP session's id; a server at capacity frees a slot asynchronously, so retry briefly."""
    for _ in range(SLOT_GRACE_TRIES):
        reply = await _rpc(http, "openenv/session/create", {})
        session_id = _member(reply, "result").get("session_id")
        if isinstance(session_id, str) and session_id:
            return session_id
        if reply.status in NOT_SERVED or _member(reply, "error").get("code") != SERVER_BUSY:
            break
        await asyncio.sleep(SLOT_GRACE_PAUSE)
    _unsupported(ctx, f"openenv/session/create gives no session id: {reply.describe(160)}", http.transcript)
    return None


async def _first_frame(ctx: Ctx, label: str, session_id: str) -> tuple[Frame | str, Transcript | None]:
    """What a socket opened with ?session_id= hears first, unasked (or why it could not open)."""
    try:
        ws = await connect_session(ctx, label, query=urlencode({"session_id": session_id}))
    except (Refused, TargetUnreachable) as exc:
        return f"the handshake was refused: {exc}", None
    try:
        return await ws.listen(ctx.timeout), ws.transcript
    finally:
        await ws.close()


async def _refusal(ctx: Ctx, clause_id: str, label: str, session_id: str, why: str) -> None:
    heard, evidence = await _first_frame(ctx, label, session_id)
    record(ctx.report, judge.attach_refused(clause_id, heard, why), evidence)


async def _unknown_id(ctx: Ctx) -> None:
    await _refusal(ctx, "openenv.attach.unknown-id", "/ws?session_id=<unknown>", UNKNOWN_ID, "no session has that id")


async def _attached(ctx: Ctx, session_id: str) -> None:
    report = ctx.report
    try:
        query = urlencode({"session_id": session_id})
        ws = await connect_session(ctx, "/ws?session_id=<the HTTP session>", query=query)
    except (Refused, TargetUnreachable) as exc:
        record(report, judge.attached(str(exc), None))
        return
    try:
        reset = await ws.reset({**ctx.options.reset, "episode_id": EPISODE})
        state = await ws.state() if reset.kind == "observation" else None
        record(report, judge.attached(reset, state), ws.transcript)
        await _refusal(ctx, "openenv.attach.single", "a second /ws?session_id=", session_id, "already attached")
    finally:
        await finish(ws, ctx.timeout)


async def _judge_close(ctx: Ctx, closed: Reply, evidence: Transcript) -> None:
    """The close answers closed (or -32602: the session ended with its socket), and the slot is free again."""
    result, error = _member(closed, "result"), _member(closed, "error")
    answered = result.get("closed") is True or error.get("code") == INVALID_PARAMS
    ws, reply, _ = await session_with_grace(ctx, "a /ws session after the close", dict(ctx.options.reset))
    if ws is not None:
        await finish(ws, ctx.timeout)
    record(ctx.report, judge.attach_close(answered, closed.describe(160), reply, ws is not None), evidence)
