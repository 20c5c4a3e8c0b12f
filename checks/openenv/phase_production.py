"""Production mode (OpenEnv 0.10's OPENENV_MODE=production) and the `/harness` WebSocket.

The mode is read from the OpenAPI paths (as `openenv validate` does), never assumed:
only a server whose OpenAPI lists none of /reset, /step and /state is held to
production mode's HTTP rule. `/harness` is tried on every server: openenv registers it
only for a harness env in production mode, and refuses the handshake (403) elsewhere.
"""

from __future__ import annotations

from checks.decision import error, info, record, unsupported
from checks.errors import Refused, TargetUnreachable
from checks.http_client import HttpClient
from checks.openenv import http_judging
from checks.openenv.facts import load_openapi_paths
from checks.openenv.http_judging import SIMULATION_PATHS
from checks.openenv.judging_sessions import harness_accepted
from checks.openenv.options import Ctx
from checks.openenv.session import FRAME_CAP, JsonSession, open_session, summarize_frame, ws_url
from checks.wire import open_websocket

HARNESS = "/harness"


async def production_phase(ctx: Ctx) -> None:
    await _judge_harness(ctx)
    paths = await load_openapi_paths(ctx)
    if paths is None or set(SIMULATION_PATHS) & paths:
        why = "no OpenAPI paths to read the mode from" if paths is None else "simulation mode (OpenAPI lists /reset)"
        clause_ids = ("openenv.production.http-absent", "openenv.production.ws-episodes")
        record(ctx.report, [unsupported(clause_id, f"not in production mode: {why}") for clause_id in clause_ids])
        return
    await _judge_http_absent(ctx)
    await _note_ws_episodes(ctx)


async def _judge_http_absent(ctx: Ctx) -> None:
    """Production mode leaves no simulation control over HTTP: the unlisted routes answer 404."""
    async with HttpClient(ctx.url, ctx.report.transcript("HTTP in production mode"), ctx.timeout, ctx.options) as http:
        replies = {
            "POST /reset": await http.post("/reset", {}),
            "POST /step": await http.post("/step", {"action": {}}),
            "GET /state": await http.get("/state"),
        }
        record(ctx.report, http_judging.http_absent(replies), http.transcript)


async def _note_ws_episodes(ctx: Ctx) -> None:
    """What /ws does in production mode (openenv 0.10 still serves whole episodes there)."""
    async with await open_session(ctx, "/ws in production mode") as ws:
        reset = await ws.reset(ctx.options.reset)
        state = await ws.state()
        seen = f"production mode; /ws reset -> {reset.kind or reset.describe()}, "
        seen += f"state -> {state.kind or state.describe()}"
        record(ctx.report, info("openenv.production.ws-episodes", actual=seen), ws.transcript)


async def _judge_harness(ctx: Ctx) -> None:
    """A refused /harness handshake is a 4xx (openenv: 403); an accepted one must start a harness session."""
    transcript = ctx.report.transcript("WebSocket /harness handshake")
    try:
        socket = await open_websocket(
            ws_url(ctx.url, endpoint=HARNESS),
            transcript,
            timeout=ctx.timeout,
            max_size=FRAME_CAP,
            summarize=summarize_frame,
            headers=ctx.options.request_headers() or None,
            ssl_context=ctx.options.websocket_ssl(ws_url(ctx.url)),
        )
    except Refused as exc:
        record(ctx.report, http_judging.harness_refused(exc.status, exc.reason), transcript)
        return
    except TargetUnreachable as exc:
        record(ctx.report, error("openenv.production.harness", f"the server went away: {exc}"), transcript)
        return
    async with JsonSession(socket, ctx.state.waits) as harness:
        first = await harness.listen(ctx.timeout)
    record(ctx.report, harness_accepted(first), transcript)
