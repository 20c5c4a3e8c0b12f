"""A conforming ORS environment server, the suite's known-good target (our own code, on Starlette).

    rlconform reference-server ors [--host H] [--port P] [--idle-expiry S] [--ping-interval S]

One environment, `counter`: splits train (3 tasks) and test (2 tasks); tools
`step` (counts steps; finished with reward 1.0 at the third), `dump` (a
text block of `size` characters: results over 4 KB go out chunked), `fail`
(raises) and `sleep` (waits `seconds`, sending keep-alive comments). Wire
forms follow both real servers: /create_session as SSE, an `end` event with
`{"ok": false, ...}` for refused calls, resume by task_id, errors as
`{"detail": ...}`. Methods are small so the zoo can break one behaviour each.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from checks.asgi_server import ServedApp, serve_asgi
from checks.errors import CheckError
from checks.serving import serve_until_interrupted

ENV = "counter"
SPLITS = [{"name": "train", "type": "train"}, {"name": "test", "type": "test"}]
TASKS = {
    "train": [{"id": f"train-{i}", "target": i + 2} for i in range(3)],
    "test": [{"id": f"test-{i}", "target": i + 5} for i in range(2)],
}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "step",
        "description": "Take one step; the third ends the episode.",
        "input_schema": {"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]},
    },
    {
        "name": "dump",
        "description": "A text block of `size` characters.",
        "input_schema": {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
    },
    {"name": "fail", "description": "Raises.", "input_schema": None},
    {
        "name": "sleep",
        "description": "Waits `seconds`.",
        "input_schema": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
    },
]
EPISODE_STEPS = 3
CHUNK = 4096
RESULT_KEPT = 60.0
CREATE_KEYS = {"env_name", "task_spec", "split", "index", "secrets"}


class Refusal(CheckError):
    """An HTTP refusal: status and detail."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


class ToolFailed(CheckError):
    """A tool raised; its message goes out as an `error` event."""


@dataclass
class Episode:
    sid: str
    task: dict[str, Any]
    steps: int = 0
    finished: bool = False
    last_active: float = field(default_factory=time.monotonic)


def block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "detail": None}


def sse(event: str, data: str) -> bytes:
    return f"event: {event}\ndata: {data}\n\n".encode()


class OrsServer:
    """The HTTP contract of one ORS server with the `counter` env."""

    def __init__(self, idle_expiry: float = 900.0, ping_interval: float = 10.0) -> None:
        self.idle_expiry, self.ping_interval = idle_expiry, ping_interval
        self.episodes: dict[str, Episode] = {}
        self.tasks: dict[str, tuple[asyncio.Task[dict[str, Any]], float]] = {}
        root = [
            Route("/health", self.health, methods=["GET"]),
            Route("/list_environments", self.list_environments, methods=["GET"]),
            Route("/create_session", self.create_session, methods=["POST"]),
            Route("/create", self.create, methods=["POST"]),
            Route("/ping", self.ping, methods=["POST"]),
            Route("/delete", self.delete, methods=["POST"]),
            Route("/delete_session", self.delete_session, methods=["POST"]),
        ]
        per_env = [
            ("tools", self.tools, "GET"), ("task_tools", self.tools, "GET"), ("splits", self.splits, "GET"),
            ("tasks", self.list_tasks, "POST"), ("num_tasks", self.num_tasks, "POST"), ("task", self.task, "POST"),
            ("task_range", self.task_range, "POST"), ("prompt", self.prompt, "GET"), ("call", self.call, "POST"),
        ]  # fmt: skip
        routes = root + [Route(f"/{{env}}/{name}", self.guarded(handler), methods=[m]) for name, handler, m in per_env]
        self.app = Starlette(routes=routes)

    # -- plumbing

    def guarded(self, handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            try:
                if request.path_params.get("env", ENV) != ENV:
                    raise Refusal(404, f"unknown environment {request.path_params['env']!r}")
                response: Response = await handler(request)
                return response
            except Refusal as refusal:
                return self.refuse(refusal.status, refusal.detail)

        return endpoint

    def refuse(self, status: int, detail: Any) -> Response:
        return JSONResponse({"detail": detail}, status_code=status)

    async def body(self, request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body() or b"null")
        except ValueError:
            raise Refusal(422, [{"type": "json_invalid", "loc": ["body"], "msg": "JSON decode error"}]) from None
        if not isinstance(body, dict):
            raise Refusal(422, [{"type": "model_type", "loc": ["body"], "msg": "Input should be an object"}])
        return body

    def sid_header(self, request: Request) -> str:
        sid = request.headers.get("x-session-id", "").strip()
        if not sid:
            raise Refusal(400, "X-Session-ID header is required")
        return sid

    def live(self, request: Request) -> Episode:
        sid = self.sid_header(request)
        episode = self.episodes.get(sid)
        if episode is not None and time.monotonic() - episode.last_active > self.idle_expiry:
            del self.episodes[sid]  # expired: reaped on the next touch
            episode = None
        if episode is None:
            raise Refusal(404, "Active environment not found")
        episode.last_active = time.monotonic()
        return episode

    def split_tasks(self, split: Any) -> list[dict[str, Any]]:
        if split not in TASKS:
            raise Refusal(400, "Invalid split")
        return TASKS[split]

    # -- discovery

    async def health(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def list_environments(self, request: Request) -> Response:
        return JSONResponse([ENV])

    async def tools(self, request: Request) -> Response:
        return JSONResponse({"tools": TOOLS})

    async def splits(self, request: Request) -> Response:
        return JSONResponse(SPLITS)

    async def split_body(self, request: Request, allowed: set[str]) -> dict[str, Any]:
        body = await self.body(request)
        extra = set(body) - allowed
        if extra or "split" not in body:
            raise Refusal(
                422, [{"type": "extra_forbidden" if extra else "missing", "loc": ["body"], "msg": "bad body"}]
            )
        return body

    async def list_tasks(self, request: Request) -> Response:
        body = await self.split_body(request, {"split"})
        return JSONResponse({"tasks": self.split_tasks(body["split"]), "env_name": ENV})

    async def num_tasks(self, request: Request) -> Response:
        body = await self.split_body(request, {"split"})
        return JSONResponse({"num_tasks": len(self.split_tasks(body["split"]))})

    async def task(self, request: Request) -> Response:
        body = await self.split_body(request, {"split", "index"})
        tasks, index = self.split_tasks(body["split"]), body.get("index")
        if not isinstance(index, int) or not -len(tasks) <= index < len(tasks):
            raise Refusal(400, "Invalid index")
        return JSONResponse({"task": tasks[index], "env_name": ENV})  # env_name: openreward's client reads it

    async def task_range(self, request: Request) -> Response:
        body = await self.split_body(request, {"split", "start", "stop"})
        start, stop = body.get("start"), body.get("stop")
        if not all(bound is None or isinstance(bound, int) for bound in (start, stop)):
            raise Refusal(400, "Invalid index range")
        return JSONResponse({"tasks": self.split_tasks(body["split"])[start:stop], "env_name": ENV})

    # -- sessions

    def new_sid(self) -> str:
        return str(uuid.uuid4())

    async def create_session(self, request: Request) -> Response:
        sid = self.new_sid()
        return self.event_stream([sse("task_id", sid), sse("end", json.dumps({"sid": sid}))])

    def task_of(self, body: dict[str, Any]) -> dict[str, Any]:
        if set(body) - CREATE_KEYS:
            raise Refusal(422, [{"type": "extra_forbidden", "loc": ["body"], "msg": "Extra inputs are not permitted"}])
        if str(body.get("env_name") or ENV).lower() != ENV:
            raise Refusal(404, f"unknown environment {body.get('env_name')!r}")
        indexed = "split" in body or "index" in body
        if (body.get("task_spec") is not None) == indexed or ("split" in body) != ("index" in body):
            raise Refusal(422, [{"type": "value_error", "loc": ["body"], "msg": "give task_spec or split+index"}])
        if not indexed:
            spec = body["task_spec"]
            if not isinstance(spec, dict):
                raise Refusal(422, [{"type": "dict_type", "loc": ["body", "task_spec"], "msg": "not an object"}])
            return spec
        tasks, index = self.split_tasks(body["split"]), body["index"]
        if not isinstance(index, int) or not -len(tasks) <= index < len(tasks):
            raise Refusal(400, "Invalid index")
        return tasks[index]

    async def create(self, request: Request) -> Response:
        try:
            sid = self.sid_header(request)
            task = self.task_of(await self.body(request))
            if sid in self.episodes:
                raise Refusal(400, "Session already exists")
        except Refusal as refusal:
            return self.refuse(refusal.status, refusal.detail)
        self.episodes[sid] = Episode(sid, task)
        return JSONResponse({"sid": sid})

    async def prompt(self, request: Request) -> Response:
        episode = self.live(request)
        return JSONResponse([block(f"Count to {episode.task.get('target', EPISODE_STEPS)} with step.")])

    async def ping(self, request: Request) -> Response:
        try:
            self.live(request)
        except Refusal as refusal:
            return self.refuse(refusal.status, refusal.detail)
        return JSONResponse({"status": "ok"})

    async def delete(self, request: Request) -> Response:
        try:
            sid = self.sid_header(request)
        except Refusal as refusal:
            return self.refuse(refusal.status, refusal.detail)
        self.episodes.pop(sid, None)
        return JSONResponse({"sid": sid})

    async def delete_session(self, request: Request) -> Response:
        return await self.delete(request)

    # -- tools

    def output(self, text: str, reward: float | None, finished: bool) -> dict[str, Any]:
        return {
            "ok": True,
            "output": {"blocks": [block(text)], "metadata": None, "reward": reward, "finished": finished},
        }

    def input_problem(self, name: str, given: dict[str, Any]) -> str:
        schema = next(tool["input_schema"] for tool in TOOLS if tool["name"] == name)
        types: dict[str, type | tuple[type, ...]] = {"string": str, "integer": int, "number": (int, float)}
        for key in (schema or {}).get("required", []):
            wanted = types[schema["properties"][key]["type"]]
            if not isinstance(given.get(key), wanted) or isinstance(given.get(key), bool):
                return f"{key}: expected {schema['properties'][key]['type']}"
        return ""

    async def run_tool(self, episode: Episode, name: str, given: dict[str, Any]) -> dict[str, Any]:
        if name not in {tool["name"] for tool in TOOLS}:
            return {"ok": False, "error": f"unknown tool {name!r}"}
        problem = self.input_problem(name, given)
        if problem:
            return {"ok": False, "error": f"invalid input: {problem}"}
        if episode.finished:
            return {"ok": False, "error": "episode finished"}
        if name == "fail":
            raise ToolFailed("the fail tool raised, as it always does")
        if name == "dump":
            return self.output("x" * max(0, min(int(given["size"]), 1_000_000)), None, False)
        if name == "sleep":
            await asyncio.sleep(max(0.0, min(float(given["seconds"]), 3600.0)))
            return self.output("slept", None, False)
        return self.step(episode, given["note"])

    def step(self, episode: Episode, note: str) -> dict[str, Any]:
        episode.steps += 1
        episode.finished = episode.steps >= EPISODE_STEPS
        return self.output(f"step {episode.steps}: {note}", 1.0 if episode.finished else 0.0, episode.finished)

    async def call(self, request: Request) -> Response:
        episode = self.live(request)
        body = await self.body(request)
        if not isinstance(body.get("name"), str) or not isinstance(body.get("input"), dict):
            raise Refusal(422, [{"type": "missing", "loc": ["body", "input"], "msg": "name and input are required"}])
        self.forget_old_results()
        task_id = body.get("task_id")
        if task_id is not None:
            if task_id not in self.tasks:
                return self.call_stream([self.error_event("unknown task_id")])
            return self.call_stream(self.result_events(task_id))
        task_id = self.new_task_id()
        running = asyncio.ensure_future(self.run_tool(episode, body["name"], body["input"]))
        self.tasks[task_id] = (running, time.monotonic())
        return self.call_stream(self.result_events(task_id))

    def new_task_id(self) -> str:
        return uuid.uuid4().hex

    def call_stream(self, events: Any) -> Response:
        return self.event_stream(events)

    def task_id_event(self, task_id: str) -> bytes:
        return sse("task_id", task_id)

    def error_event(self, message: str) -> bytes:
        return sse("error", message)

    def forget_old_results(self) -> None:
        now = time.monotonic()
        for task_id, (running, started) in list(self.tasks.items()):
            if running.done() and now - started > RESULT_KEPT:
                del self.tasks[task_id]

    async def result_events(self, task_id: str) -> AsyncIterator[bytes]:
        yield self.task_id_event(task_id)
        running = self.tasks[task_id][0]
        while not running.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(running), self.ping_interval)
            if not running.done():
                yield f": ping - {time.time():.3f}\n\n".encode()
        try:
            result = running.result()
        except Exception as exc:  # a tool's failure is the stream's error event, whatever it was
            yield self.error_event(str(exc) or type(exc).__name__)
            return
        for event in self.encode_result(json.dumps(result)):
            yield event

    def encode_result(self, text: str) -> list[bytes]:
        """All pieces but the last as chunk events, the last as end (as both real servers cut them)."""
        pieces = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)] or [""]
        return [sse("chunk", piece) for piece in pieces[:-1]] + [sse("end", pieces[-1])]

    def event_stream(self, events: Any, media_type: str = "text/event-stream; charset=utf-8") -> Response:
        async def each() -> AsyncIterator[bytes]:
            if isinstance(events, list):
                for event in events:
                    yield event
            else:
                async for event in events:
                    yield event

        headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
        return StreamingResponse(each(), media_type=media_type, headers=headers)


RunningServer = ServedApp[OrsServer]


async def serve_app(server: OrsServer, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve `server` here; `port=0` takes a free port from the OS, known before this returns."""
    return RunningServer(server, await serve_asgi(server.app, host, port))


async def start_reference_server(host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Start serving and return at once; `port=0` takes a free port from the OS."""
    return await serve_app(OrsServer(), host, port)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server ors", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--idle-expiry", type=float, default=900.0, help="seconds of idleness that end a session")
    parser.add_argument("--ping-interval", type=float, default=10.0, help="seconds between keep-alive comments")
    args = parser.parse_args(argv)
    if not (0 < args.idle_expiry <= 86400 and 0 < args.ping_interval <= 600):
        parser.error("--idle-expiry must be 0..86400 s and --ping-interval 0..600 s")

    return serve_until_interrupted(
        lambda: serve_app(OrsServer(args.idle_expiry, args.ping_interval), args.host, args.port),
        lambda url: f"ors reference server listening on {url}",
    )
