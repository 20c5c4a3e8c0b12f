"""A hand-written OpenEnv-speaking quiz server over FastAPI, with switches for breaking it.

openenv-core cannot be made to send a flattened envelope, a wrong error code
or no CAPACITY_REACHED, so the zoo entries that need those are this server
with one quirk switched on. With no quirk it conforms (the tests check that
too, so every zoo finding comes from its quirk).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import FastAPI, Request, Response, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import Field, ValidationError

# The quiz's models are the reference server's: the quirks below are all that sets this server apart.
from checks.openenv.reference import TASKS, QuizAction, QuizEpisode, QuizObservation, QuizState, step_action


class AdvertisedQuizAction(QuizAction):
    """What /schema shows under the `advertise_hint` quirk: one optional member more than /ws accepts."""

    hint: str | None = Field(None, max_length=32)


class StyledQuizAction(QuizAction):
    """What /schema shows under the `advertise_style` quirk: an optional enum member /ws refuses."""

    style: Literal["terse", "verbose"] | None = None


class QuizObservationWithMetadata(QuizObservation):
    """What /schema shows under the `metadata_mismatch` quirk: observations carry metadata (as in 0.10)."""

    metadata: dict[str, Any] = Field(default_factory=dict)


class QuizResetObservation(QuizObservation):
    """The reset observation under the `own_reset_observation` quirk: it also names the task."""

    task_id: str = ""


@dataclass(frozen=True)
class Quirks:
    flat_envelope: bool = False  # observation fields straight in data
    validation_code: str = "VALIDATION_ERROR"  # the code sent for a refused action
    capacity: int = 8
    capacity_frame: bool = True  # False: close with 1013 and no CAPACITY_REACHED frame
    free_slot_on_disconnect: bool = True  # False: only a close message frees the slot
    health_status: int = 200
    reply_to_close: bool = False  # answer a close message with a frame before closing
    first_step_count: int = 0  # what step_count says right after a reset
    close_on_unknown_type: bool = False  # end the session with 1011 on an unknown type
    exit_on_binary: bool = False  # the whole process exits on a binary frame
    keep_step_count: bool = False  # a reset leaves step_count where the last episode left it
    reseed_if_truthy: bool = False  # `if seed:` skips seed 0, so the RNG runs on from the last episode
    idle_heartbeat: float | None = None  # seconds of silence after which an application "heartbeat" goes out
    greeting: bool = False  # a "hello" frame as soon as the socket opens
    integer_rewards: bool = False  # rewards 1 and 0 instead of 1.0 and 0.0 (legal: JSON numbers)
    feedback_padding: int = 0  # characters added to every step's feedback (legal: large observations)
    slow_metadata: bool = False  # /metadata trickles a byte every 0.2 s and never finishes
    metadata_body: str | None = None  # the raw JSON text /metadata answers with
    count_refused_steps: bool = False  # step_count goes up before the action is validated
    ws_path: str = "/ws"  # where the session endpoint is served
    ws_reset_delay: float = 0.0  # seconds a /ws reset takes before its reply (the session waits meanwhile)
    mute_on_non_object: bool = False  # non-object JSON leaves the session open but deaf until the client leaves
    advertise_hint: bool = False  # /schema.action lists an optional `hint` that /ws refuses
    advertise_style: bool = False  # /schema.action lists an optional enum `style` that /ws refuses
    # the task API: None (not served), "consistent", "miscounted" (num_tasks off by one) or
    # "unresettable" (a /ws reset to a listed task is refused)
    tasks: str | None = None
    metadata_mismatch: bool = False  # step frames carry a top-level metadata unlike the observation's
    own_reset_observation: bool = False  # reset frames follow /schema.reset_observation (legal: OpenEnv 0.10)
    http_metadata: bool = True  # False: a server showing 0.10 leaves metadata out of HTTP /reset and /step
    # POST /mcp: None (not served), "jsonrpc", "crash", "plain", "other-code", "snake-schema" (tools/list
    # spells input_schema) or "missing-name-other-code" (tools/call without a name gets -32601)
    mcp: str | None = None
    # OpenEnv 0.10's production mode: None (simulation), "hidden" (OpenAPI lists no /reset, /step, /state
    # and they answer 404, as 0.10 does) or "served-unlisted" (OpenAPI lists none, yet they still answer)
    production: str | None = None
    silent_harness: bool = False  # /harness accepts the handshake of this harness-less env, then says nothing
    # /ws?session_id= for an HTTP MCP session: None (ignored, as 0.3 does), "attaches" (as 0.10 does),
    # "second-attach" (a second socket attaches too), "refuses-own" (even the session's own id is refused)
    # or "no-close" (openenv/session/close answers an error)
    attach: str | None = None
    mirror_metadata: bool = False  # step frames mirror the observation's metadata at the top of data (as 0.10)


class Episode(QuizEpisode):
    """The reference quiz's episode, bent by the quirks that touch its state, seed and feedback."""

    def __init__(self, quirks: Quirks) -> None:
        super().__init__()
        self.quirks = quirks
        self.state = QuizState(episode_id="fresh", step_count=quirks.first_step_count)

    def reset(self, data: dict[str, Any]) -> QuizObservation:
        rng = self.rng
        kept = self.state.step_count if self.quirks.keep_step_count else self.quirks.first_step_count
        observation = super().reset(data)
        if self.quirks.reseed_if_truthy and not data.get("seed"):
            self.rng = rng  # `if seed:` skips seed 0 (and no seed), so the RNG runs on
        self.state.step_count = kept
        return observation

    def step(self, action: QuizAction) -> QuizObservation:
        observation = super().step(action)
        observation.feedback += "." * self.quirks.feedback_padding
        return observation


def envelope(observation: QuizObservation, quirks: Quirks) -> dict[str, Any]:
    fields = observation.model_dump(exclude={"done", "reward"})
    reward = observation.reward
    if quirks.integer_rewards and reward is not None:
        reward = int(reward)
    if quirks.flat_envelope:
        return {**fields, "reward": reward, "done": observation.done}
    if (quirks.metadata_mismatch or quirks.mirror_metadata) and observation.done:
        top = {"step": 2 if quirks.metadata_mismatch else 1}
        mirrored = {"observation": {**fields, "metadata": {"step": 1}}, "metadata": top}
        return {**mirrored, "reward": reward, "done": observation.done}
    return {"observation": fields, "reward": reward, "done": observation.done}


def error(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


def build_app(quirks: Quirks = Quirks()) -> FastAPI:
    app = FastAPI(title="handmade quiz", version="1.0.0")
    http_sessions: dict[str, int] = {}  # HTTP MCP session id -> sockets attached to it
    add_http_routes(app, quirks, http_sessions)
    app.websocket(quirks.ws_path)(ws_endpoint(quirks, http_sessions))
    return app


def add_http_routes(app: FastAPI, quirks: Quirks, http_sessions: dict[str, int]) -> None:
    @app.get("/health")
    def health(response: Response) -> dict[str, str]:
        response.status_code = quirks.health_status
        return {"status": "healthy" if quirks.health_status == 200 else "unhealthy"}

    @app.get("/metadata")
    def metadata() -> Any:
        if quirks.slow_metadata:
            return StreamingResponse(trickle(), media_type="application/json")
        if quirks.metadata_body is not None:
            return Response(quirks.metadata_body, media_type="application/json")
        return {"name": "HandmadeQuiz", "description": "a quiz served without openenv-core"}

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        advertised = AdvertisedQuizAction if quirks.advertise_hint else QuizAction
        published = {
            "action": (StyledQuizAction if quirks.advertise_style else advertised).model_json_schema(),
            "observation": (
                QuizObservationWithMetadata if quirks.metadata_mismatch or quirks.mirror_metadata else QuizObservation
            ).model_json_schema(),
            "state": QuizState.model_json_schema(),
        }
        if quirks.own_reset_observation:
            published["reset_observation"] = QuizResetObservation.model_json_schema()
        return published

    if quirks.mcp is not None:
        app.post("/mcp")(mcp_endpoint(quirks.mcp, quirks.attach, http_sessions))
    if quirks.tasks is not None:
        add_task_routes(app, miscounted=quirks.tasks == "miscounted")

    # OpenEnv 0.10 puts a top-level metadata (null when empty) in every HTTP body; 0.3 never did.
    shows_010 = quirks.tasks is not None or quirks.own_reset_observation
    top = {"metadata": None} if shows_010 and quirks.http_metadata else {}

    if quirks.silent_harness:
        app.websocket("/harness")(silent_harness)
    if quirks.production == "hidden":
        return
    listed = quirks.production is None

    @app.post("/reset", include_in_schema=listed)
    def http_reset(body: dict[str, Any]) -> dict[str, Any]:
        return {**envelope(Episode(quirks).reset(body), Quirks()), "reward": None, **top}

    @app.post("/step", include_in_schema=listed)
    def http_step(body: dict[str, Any], response: Response) -> dict[str, Any]:
        action = step_action(body, response)
        if not isinstance(action, QuizAction):
            return action
        episode = Episode(quirks)
        episode.reset({})
        return {**envelope(episode.step(action), Quirks()), **top}

    @app.get("/state", include_in_schema=listed)
    def http_state() -> dict[str, Any]:
        return Episode(quirks).state.model_dump()


async def silent_harness(websocket: WebSocket) -> None:
    """Accepts /harness and sends nothing until the client leaves (no session_started)."""
    await websocket.accept()
    try:
        while True:
            await websocket.receive_text()
    except WebSocketDisconnect:
        return


def add_task_routes(app: FastAPI, miscounted: bool) -> None:
    """OpenEnv 0.10's task API over TASKS: one split, "test", whose tasks are the task ids."""
    listed = sorted(TASKS)

    @app.get("/list_environments")
    def environments() -> list[str]:
        return ["quiz"]

    @app.get("/quiz/splits")
    def splits() -> list[dict[str, str]]:
        return [{"name": "test", "type": "test"}]

    @app.post("/quiz/num_tasks")
    def num_tasks(body: dict[str, Any]) -> dict[str, int]:
        return {"num_tasks": len(listed) + miscounted}

    @app.post("/quiz/tasks")
    def tasks(body: dict[str, Any]) -> dict[str, Any]:
        return {"tasks": listed, "env_name": "quiz"}

    @app.post("/quiz/task")
    def task(body: dict[str, Any]) -> dict[str, Any]:
        return {"task": listed[int(body["index"])]}

    @app.post("/quiz/task_range")
    def task_range(body: dict[str, Any]) -> dict[str, Any]:
        return {"tasks": listed[body.get("start") : body.get("stop")]}


class EndSession(Exception):
    """The session ends here; `close_code` None means the socket was already dealt with."""

    def __init__(self, close_code: int | None) -> None:
        super().__init__(close_code)
        self.close_code = close_code


def ws_endpoint(quirks: Quirks, http_sessions: dict[str, int]) -> Any:
    slots = {"active": 0}

    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        session_id = websocket.query_params.get("session_id")
        if session_id is not None and quirks.attach is not None:
            await serve_attached(websocket, quirks, http_sessions, session_id)
            return
        if slots["active"] >= quirks.capacity:
            await refuse_at_capacity(websocket, quirks, slots["active"])
            return
        slots["active"] += 1
        holds_slot = True  # until a close message or hostile input ends the session here
        try:
            episode = Episode(quirks)
            if quirks.greeting:
                await websocket.send_text(json.dumps({"type": "hello", "data": {"server": "handmade quiz"}}))
            try:
                await answer_frames(websocket, episode, quirks)
            except EndSession as end:
                if end.close_code is None:
                    return
            slots["active"] -= 1
            holds_slot = False
            await websocket.close(1000)
        except Exception:  # the client went away (or sent something the socket layer refused)
            if holds_slot and quirks.free_slot_on_disconnect:
                slots["active"] -= 1

    return ws


async def serve_attached(websocket: WebSocket, quirks: Quirks, http_sessions: dict[str, int], session_id: str) -> None:
    """A socket attached to an HTTP MCP session (OpenEnv 0.10): one at a time, unknown ids refused."""
    attached = http_sessions.get(session_id)
    if quirks.attach == "refuses-own" or attached is None or (attached and quirks.attach != "second-attach"):
        await websocket.send_text(error("SESSION_ERROR", f"cannot attach to session {session_id!r}"))
        await websocket.close(1000)
        return
    http_sessions[session_id] = attached + 1
    episode = Episode(quirks)
    try:
        await answer_frames(websocket, episode, quirks)
    except EndSession as end:
        if end.close_code is not None:
            await websocket.close(end.close_code)
    except Exception:  # the client went away
        pass
    finally:
        if session_id in http_sessions:
            http_sessions[session_id] -= 1


async def refuse_at_capacity(websocket: WebSocket, quirks: Quirks, active: int) -> None:
    if quirks.capacity_frame:
        await websocket.send_text(
            error("CAPACITY_REACHED", "at capacity", active_sessions=active, max_sessions=quirks.capacity)
        )
        await websocket.close(1000)
    else:
        await websocket.close(1013)


async def answer_frames(websocket: WebSocket, episode: Episode, quirks: Quirks) -> None:
    """Answer the client's frames until the session ends (EndSession) or the client leaves."""
    while True:
        reply = await answer_frame(websocket, episode, quirks)
        if reply is not None:
            await websocket.send_text(reply)


async def answer_frame(websocket: WebSocket, episode: Episode, quirks: Quirks) -> str | None:
    """The reply to the client's next frame (None: nothing to send); EndSession when the session ends."""
    frame = await receive_or_heartbeat(websocket, quirks.idle_heartbeat)
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    if frame.get("text") is None:
        if quirks.exit_on_binary:
            os._exit(3)
        await websocket.send_text(error("SESSION_ERROR", "binary frames are not spoken here"))
        raise EndSession(1000)
    try:
        message = json.loads(frame["text"])
    except ValueError as exc:
        return error("INVALID_JSON", f"Invalid JSON: {exc}")
    if not isinstance(message, dict):
        if quirks.mute_on_non_object:
            await ignore_until_disconnect(websocket)
        await websocket.send_text(error("SESSION_ERROR", "a message must be an object"))
        raise EndSession(1000)
    return await answer_message(websocket, episode, quirks, message)


async def answer_message(websocket: WebSocket, episode: Episode, quirks: Quirks, message: dict[str, Any]) -> str:
    kind = message.get("type")
    if kind == "close":
        if quirks.reply_to_close:
            await websocket.send_text(json.dumps({"type": "closed", "data": {}}))
        raise EndSession(1000)
    if kind == "reset":
        await asyncio.sleep(quirks.ws_reset_delay)
        raw_data = message.get("data")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        if quirks.tasks == "unresettable" and "index" in data:
            return error("EXECUTION_ERROR", "reset() got an unexpected keyword argument 'index'")
        reply: dict[str, Any] | str = {"type": "observation", "data": envelope(episode.reset(data), quirks)}
        if quirks.own_reset_observation and isinstance(reply, dict):
            reply["data"]["observation"]["task_id"] = episode.task
    elif kind == "step":
        reply = answer_step(episode, message.get("data"), quirks)
    elif kind == "state":
        reply = {"type": "state", "data": episode.state.model_dump()}
    elif quirks.close_on_unknown_type:
        await websocket.close(1011)
        raise EndSession(None)
    else:
        return error("UNKNOWN_TYPE", f"Unknown message type: {kind}")
    return reply if isinstance(reply, str) else json.dumps(reply)


def mcp_endpoint(mode: str, attach: str | None, http_sessions: dict[str, int]) -> Any:
    """POST /mcp speaking no tools: "jsonrpc" answers bad input as JSON-RPC 2.0 requires, the others do not."""

    async def mcp(request: Request) -> Any:
        raw = await request.body()
        if mode == "crash":
            json.loads(raw)  # unguarded: a body that is not JSON becomes a 500
            return JSONResponse({"detail": "bad request"}, status_code=400)
        if mode == "plain":
            return JSONResponse({"detail": "bad request"}, status_code=400)
        try:
            message = json.loads(raw)
        except ValueError:
            message, code = None, -32700
        else:
            code = -32600 if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" else -32601
        if code == -32601:
            return mcp_method(mode, message, attach, http_sessions)
        if mode == "other-code":
            code = -32603
        return {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": "no such request"}}

    return mcp


def mcp_method(mode: str, message: dict[str, Any], attach: str | None, http_sessions: dict[str, int]) -> dict[str, Any]:
    """One tool, `add`: tools/list and tools/call as MCP spells them, unless `mode` breaks one."""
    method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
    if method == "tools/list":
        schema_key = "input_schema" if mode == "snake-schema" else "inputSchema"
        tool = {"name": "add", "description": "add two integers", schema_key: {"type": "object", "properties": {}}}
        return {"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool]}}
    if method == "openenv/session/create":  # attached to only under the `attach` quirk
        session_id = f"handmade-http-session-{len(http_sessions) + 1}"
        http_sessions[session_id] = 0
        return {"jsonrpc": "2.0", "id": rid, "result": {"session_id": session_id}}
    if method == "openenv/session/close":
        if attach == "no-close":
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "close failed"}}
        http_sessions.pop(str(params.get("session_id")), None)
        return {"jsonrpc": "2.0", "id": rid, "result": {"session_id": params.get("session_id"), "closed": True}}
    if method == "tools/call" and not params.get("name"):
        code = -32601 if mode == "missing-name-other-code" else -32602
        return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": "Missing 'name' in params"}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}}


async def trickle():
    for _ in range(10_000):
        yield b" "
        await asyncio.sleep(0.2)


async def receive_or_heartbeat(websocket: WebSocket, idle: float | None) -> dict[str, Any]:
    """The next client frame; with `idle` set, a heartbeat goes out whenever the client is silent that long."""
    receiving = asyncio.ensure_future(websocket.receive())
    while idle is not None:
        done, _ = await asyncio.wait({receiving}, timeout=idle)
        if done:
            break
        await websocket.send_text(json.dumps({"type": "heartbeat", "data": {}}))
    return dict(await receiving)


async def ignore_until_disconnect(websocket: WebSocket) -> None:
    while (await websocket.receive())["type"] != "websocket.disconnect":
        pass
    raise WebSocketDisconnect(1000)


def answer_step(episode: Episode, data: Any, quirks: Quirks) -> dict[str, Any] | str:
    try:
        action = QuizAction.model_validate(data)
    except ValidationError as exc:
        if quirks.count_refused_steps:
            episode.state.step_count += 1
        return error(quirks.validation_code, "Invalid message", errors=json.loads(exc.json()))
    try:
        return {"type": "observation", "data": envelope(episode.step(action), quirks)}
    except Exception as exc:  # the env's own failure, reported and survived
        return error("EXECUTION_ERROR", str(exc))


def serve_forever(app: FastAPI) -> None:
    """Bind a free 127.0.0.1 port, print it, and serve until killed (for zoo entries run as processes)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    sys.stdout.flush()
    uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="off")).run(sockets=[sock])
