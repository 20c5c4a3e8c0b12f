"""A conforming OpenEnv environment server written on rlconform's own code: a two-question quiz.

    rlconform reference-server openenv --port 8000 [--host H] [--capacity N]

It speaks what openenv-core serves (the fact sheet's routes and messages):
`GET /health`, `/metadata`, `/schema`; stateless `POST /reset`, `/step` and
`GET /state`; a `/ws` session per socket (reset, step, state, close and
`mcp` messages, the seven error codes, CAPACITY_REACHED past `--capacity`
sessions); and `POST /mcp`, JSON-RPC 2.0 with one tool. An episode is one
question: task "t1" or "t2" (reset data `task_id`), a seeded nonce in each
step observation, reward 1.0 for the right answer and 0.0 otherwise; the
answer "boom" makes the env raise, to show EXECUTION_ERROR.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
from typing import Any

from fastapi import FastAPI, Request, Response, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from checks.asgi_server import AsgiServer, listening_socket
from checks.errors import CheckError
from checks.serving import serve_until_interrupted

TASKS = {"t1": ("capital of France?", "paris"), "t2": ("2+2?", "4")}
CRASH_ANSWER = "boom"
DEFAULT_CAPACITY = 8
DEMO_CAPACITY = 5  # the suite's default group size, so that the sixth session shows CAPACITY_REACHED
# What a demo target of this server runs with: the quiz's own tasks, answers, crash and score.
DEMO_OPTIONS: dict[str, Any] = {
    "reset": {"task_id": "t1", "seed": 7},
    "contrast_task_id": "t2",
    "actions": [
        {"answer": "paris"},
        {"answer": ""},
        {"answer": "x", "bogus": 1},
        {"confidence": 3},
        {"answer": "x", "confidence": 101},
    ],
    "expected_reward": 1.0,
    "crash_action": {"answer": CRASH_ANSWER},
    "latency_rounds": 5,
}
ANSWER_TOOL = {
    "name": "answer",
    "description": "Score an answer to a task's question (a fresh episode each call).",
    "inputSchema": {
        "type": "object",
        "properties": {"task_id": {"type": "string", "enum": list(TASKS)}, "answer": {"type": "string"}},
        "required": ["answer"],
    },
}


class QuizAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(min_length=1, max_length=64)
    confidence: int = Field(50, ge=0, le=100)


class QuizObservation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    done: bool = False
    reward: float | None = None
    prompt: str = ""
    feedback: str = ""
    nonce: float = 0.0


class QuizState(BaseModel):
    episode_id: str | None = None
    step_count: int = Field(0, ge=0)


class QuizEpisode:
    """One session's environment: the task, the seeded generator and the state."""

    def __init__(self) -> None:
        self.task, self.rng = "t1", random.Random(0)
        self.state = QuizState(episode_id=None, step_count=0)

    def reset(self, data: dict[str, Any]) -> QuizObservation:
        task = data.get("task_id", "t1")
        self.task = task if task in TASKS else "t1"
        seed = data.get("seed")
        self.rng = random.Random(seed if isinstance(seed, int) else 0)
        self.state = QuizState(episode_id=str(data.get("episode_id") or "episode"), step_count=0)
        return QuizObservation(prompt=TASKS[self.task][0])

    def step(self, action: QuizAction) -> QuizObservation:
        if action.answer == CRASH_ANSWER:
            raise RuntimeError("the quiz env crashed, as asked")
        self.state.step_count += 1
        correct = action.answer.strip().lower() == TASKS[self.task][1]
        return QuizObservation(
            feedback="correct" if correct else "wrong",
            nonce=self.rng.random(),
            done=True,
            reward=1.0 if correct else 0.0,
        )


def envelope(observation: QuizObservation) -> dict[str, Any]:
    """`data` of an observation message: the fields nested, reward and done beside them."""
    fields = observation.model_dump(exclude={"done", "reward"})
    return {"observation": fields, "reward": observation.reward, "done": observation.done}


def error_frame(code: str, message: str, **extra: Any) -> str:
    return json.dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


class EndSession(CheckError):
    """The session ends: the socket is closed with 1000 after whatever was sent."""


def build_app(capacity: int = DEFAULT_CAPACITY) -> FastAPI:
    app = FastAPI(title="OpenEnv Environment HTTP API", version="1.0.0")
    add_http_routes(app)
    app.post("/mcp")(mcp_over_http)
    app.websocket("/ws")(SessionEndpoint(capacity).serve)
    return app


def add_http_routes(app: FastAPI) -> None:
    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/metadata")
    def metadata() -> dict[str, str]:
        return {"name": "rlconform quiz", "description": "rlconform's reference OpenEnv server", "version": "1.0.0"}

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return {
            "action": QuizAction.model_json_schema(),
            "observation": QuizObservation.model_json_schema(),
            "state": QuizState.model_json_schema(),
        }

    @app.post("/reset")
    def http_reset(body: dict[str, Any]) -> dict[str, Any]:
        return envelope(QuizEpisode().reset(body))

    @app.post("/step")
    def http_step(body: dict[str, Any], response: Response) -> dict[str, Any]:
        action = step_action(body, response)
        if not isinstance(action, QuizAction):
            return action
        episode = QuizEpisode()  # HTTP is stateless, as openenv-core's: every call is a fresh env
        episode.reset({})
        try:
            return envelope(episode.step(action))
        except RuntimeError as exc:
            response.status_code = 500
            return {"detail": str(exc)}

    @app.get("/state")
    def http_state() -> dict[str, Any]:
        return QuizEpisode().state.model_dump()


def step_action(body: dict[str, Any], response: Response) -> QuizAction | dict[str, Any]:
    """The action of a POST /step body; if it does not validate, FastAPI's 422 body (the status set)."""
    try:
        return QuizAction.model_validate(body.get("action"))
    except ValidationError as exc:
        response.status_code = 422
        return {"detail": json.loads(exc.json())}


class SessionEndpoint:
    """`/ws`: one QuizEpisode per socket, at most `capacity` at once."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.active = capacity, 0

    async def serve(self, websocket: WebSocket) -> None:
        await websocket.accept()
        if self.active >= self.capacity:
            await websocket.send_text(
                error_frame("CAPACITY_REACHED", "at capacity", active_sessions=self.active, max_sessions=self.capacity)
            )
            await websocket.close(1000)
            return
        self.active += 1
        try:
            episode = QuizEpisode()
            with contextlib.suppress(EndSession):
                while True:
                    reply = await answer_frame(websocket, episode)
                    await websocket.send_text(reply)
            await websocket.close(1000)
        except (WebSocketDisconnect, RuntimeError):  # the client left, or the socket was already closed
            pass
        finally:
            self.active -= 1


async def answer_frame(websocket: WebSocket, episode: QuizEpisode) -> str:
    """The reply to the client's next frame; EndSession when the session ends."""
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(frame.get("code", 1000))
    if frame.get("text") is None:
        await websocket.send_text(error_frame("SESSION_ERROR", "binary frames are not spoken here"))
        raise EndSession
    try:
        message = json.loads(frame["text"])
    except ValueError as exc:
        return error_frame("INVALID_JSON", f"Invalid JSON: {exc}")
    if not isinstance(message, dict):
        await websocket.send_text(error_frame("SESSION_ERROR", "a message must be a JSON object"))
        raise EndSession
    return answer_message(episode, message)


def answer_message(episode: QuizEpisode, message: dict[str, Any]) -> str:
    kind, data = message.get("type"), message.get("data")
    if kind in ("state", "close") and "data" in message:
        problem = [{"type": "extra_forbidden", "loc": ["data"], "msg": "Extra inputs are not permitted"}]
        return error_frame("VALIDATION_ERROR", "Invalid message", errors=problem)
    if kind == "close":
        raise EndSession
    if kind == "reset":
        return json.dumps(
            {"type": "observation", "data": envelope(episode.reset(data if isinstance(data, dict) else {}))}
        )
    if kind == "step":
        return answer_step(episode, data)
    if kind == "state":
        return json.dumps({"type": "state", "data": episode.state.model_dump()})
    if kind == "mcp":
        return json.dumps({"type": "mcp", "data": answer_jsonrpc(data)})
    return error_frame("UNKNOWN_TYPE", f"Unknown message type: {kind}")


def answer_step(episode: QuizEpisode, data: Any) -> str:
    try:
        action = QuizAction.model_validate(data)
    except ValidationError as exc:  # refused before the env sees it: step_count stays
        return error_frame("VALIDATION_ERROR", "Invalid message", errors=json.loads(exc.json()))
    try:
        observation = episode.step(action)
    except RuntimeError as exc:  # the env's own failure, reported and survived
        return error_frame("EXECUTION_ERROR", str(exc))
    return json.dumps({"type": "observation", "data": envelope(observation)})


async def mcp_over_http(request: Request) -> dict[str, Any]:
    """POST /mcp: always 200 with a JSON-RPC 2.0 object, as openenv-core answers."""
    try:
        message = json.loads(await request.body())
    except ValueError:
        return jsonrpc_error(None, -32700, "Parse error")
    return answer_jsonrpc(message)


def answer_jsonrpc(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return jsonrpc_error(None, -32600, "Invalid Request")
    request_id, method, params = message.get("id"), message["method"], message.get("params") or {}
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": request_id, "result": {"tools": [ANSWER_TOOL]}}
    if method != "tools/call":
        return jsonrpc_error(request_id, -32601, f"Method not found: {method}")
    if not isinstance(params, dict) or params.get("name") != "answer" or not isinstance(params.get("arguments"), dict):
        return jsonrpc_error(request_id, -32602, "Invalid params: call the tool 'answer' with arguments")
    arguments = params["arguments"]
    episode = QuizEpisode()
    episode.reset({"task_id": arguments.get("task_id", "t1")})
    try:
        observation = episode.step(QuizAction(answer=str(arguments.get("answer", ""))))
    except (ValidationError, RuntimeError) as exc:
        return {"jsonrpc": "2.0", "id": request_id, "result": {"isError": True, "content": [text(str(exc))]}}
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [text(json.dumps(envelope(observation)))]}}


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


def jsonrpc_error(request_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


class QuizServer(AsgiServer):
    """The quiz app on its own socket; `demo_options` are the options a demo target of it runs with."""

    demo_options: dict[str, Any]


async def start_reference_server(
    host: str = "127.0.0.1", port: int = 0, *, capacity: int = DEFAULT_CAPACITY
) -> QuizServer:
    """The quiz server in-process (`port=0`: a free port); its `url` is the http:// base URL."""
    server = QuizServer(build_app(capacity), listening_socket(host, port))
    server.demo_options = {}
    await server.start()
    return server


async def start_demo_server(host: str = "127.0.0.1", port: int = 0) -> QuizServer:
    """The quiz server as the service's demo runs it; its `demo_options` go on the demo target."""
    server = await start_reference_server(host, port, capacity=DEMO_CAPACITY)
    server.demo_options = dict(DEMO_OPTIONS)
    return server


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server openenv", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--capacity", type=int, default=DEFAULT_CAPACITY, help="sessions served at once")
    args = parser.parse_args(argv)
    if not 1 <= args.capacity <= 1024:
        parser.error("--capacity must be 1..1024")

    return serve_until_interrupted(
        lambda: start_reference_server(args.host, args.port, capacity=args.capacity),
        lambda url: f"OpenEnv reference server (quiz) at {url}",
    )
