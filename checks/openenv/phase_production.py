"""Production mode (OpenEnv 0.10's OPENENV_MODE=production) and the `/harness` WebSocket.

The mode is read from the OpenAPI paths (as `openenv validate` does), never assumed:
only a server whose OpenAPI lists none of /reset, /step and /state is held to
production mode's HTTP rule. `/harness` is tried on every server: openenv registers it
only for a harness env in production mode, and refuses the handshake (403) elsewhere.
"""

from __future__ import annotations

from checks.core import Report, Transcript
from checks.errors import Refused, TargetUnreachable
from checks.http_client import HttpClient
from checks.openenv.facts import load_openapi_paths
from checks.openenv.http_judging import SIMULATION_PATHS
from checks.openenv.options import Ctx
from checks.openenv.session import FRAME_CAP, JsonSession, open_session, summarize_frame, ws_url
from checks.wire import open_websocket

HARNESS = "/harness"


async def production_phase(ctx: Ctx) -> None:
    await _judge_harness(ctx)
    paths = await load_openapi_paths(ctx)
    if paths is None or set(SIMULATION_PATHS) & paths:
        why = "no OpenAPI paths to read the mode from" if paths is None else "simulation mode (OpenAPI lists /reset)"
        for clause_id in ("openenv.production.http-absent", "openenv.production.ws-episodes"):
            ctx.report.unsupported(clause_id, f"not in production mode: {why}")
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
        served = [f"{route}: {reply.describe()}" for route, reply in replies.items() if reply.status != 404]
        ctx.report.check(
            not served,
            "openenv.production.http-absent",
            expected="404 for POST /reset, POST /step and GET /state (OpenAPI lists none of them)",
            actual="; ".join(served) or "404 for all three",
            evidence=http.transcript,
        )


async def _note_ws_episodes(ctx: Ctx) -> None:
    """What /ws does in production mode (openenv 0.10 still serves whole episodes there)."""
    async with await open_session(ctx, "/ws in production mode") as ws:
        reset = await ws.reset(ctx.options.reset)
        state = await ws.state()
        ctx.report.info(
            "openenv.production.ws-episodes",
            actual=f"production mode; /ws reset -> {reset.kind or reset.describe()}, "
            f"state -> {state.kind or state.describe()}",
            evidence=ws.transcript,
        )


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
        _judge_refusal(ctx.report, exc, transcript)
        return
    except TargetUnreachable as exc:
        ctx.report.error("openenv.production.harness", f"the server went away: {exc}", transcript)
        return
    async with JsonSession(socket, ctx.report) as harness:
        first = await harness.listen(ctx.timeout)
    ctx.report.check(
        first.kind == "session_started",
        "openenv.production.harness",
        expected='a refused handshake (403), or a harness: {"type": "session_started", ...} first',
        actual=f"accepted (101); first frame: {first.describe()}",
        evidence=transcript,
    )


def _judge_refusal(report: Report, exc: Refused, transcript: Transcript) -> None:
    report.check(
        exc.status is not None and 400 <= exc.status < 500,
        "openenv.production.harness",
        expected="the handshake refused with HTTP 403 (openenv), or another 4xx",
        actual=f"refused with HTTP {exc.status}" if exc.status is not None else f"no HTTP answer: {exc.reason}",
        evidence=transcript,
    )
