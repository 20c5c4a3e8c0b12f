"""The reference ORS server with one behaviour broken, chosen by name: one subclass, a flag per fault.

Each override changes only what its fault names; everything else stays the
reference's (`checks/ors/reference.py`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from checks.ors import reference
from checks.ors.reference import ENV, Episode, OrsServer, Refusal, sse

# The keep-alive faults run with delays short enough for a test: a 1.2 s idle expiry, a ping every 0.2 s.
SHORT = {"idle_expiry": 1.2, "ping_interval": 0.2}
SETTINGS: dict[str, dict[str, float]] = {
    "silent-slow-call": {**SHORT, "ping_interval": 30.0},
    "sessions-never-expire": {**SHORT, "idle_expiry": 600.0},
    "pings-do-not-keep-alive": SHORT,
}


class BrokenOrsServer(OrsServer):
    """The reference with `fault` in effect."""

    def __init__(self, fault: str) -> None:
        self.fault = fault  # before the routes are built: `guarded` reads it
        super().__init__(**SETTINGS.get(fault, {}))
        self._sids = itertools.count()
        self._asked: set[str] = set()
        self._deleted: dict[str, Episode] = {}

    # -- discovery

    async def list_environments(self, request: Request) -> Response:
        if self.fault == "list-envs-not-array":
            return JSONResponse({"environments": [ENV]})
        if self.fault == "listed-name-unusable":
            return JSONResponse([ENV, "ghost"])
        return await super().list_environments(request)

    def guarded(self, handler: Any) -> Any:
        if self.fault != "unknown-env-200":
            return super().guarded(handler)

        async def endpoint(request: Request) -> Response:
            try:
                response: Response = await handler(request)
                return response
            except Refusal as refusal:
                return self.refuse(refusal.status, refusal.detail)

        return endpoint

    async def tools(self, request: Request) -> Response:
        if self.fault == "tools-without-description":
            return JSONResponse(
                {"tools": [{k: v for k, v in t.items() if k != "description"} for t in reference.TOOLS]}
            )
        return await super().tools(request)

    async def splits(self, request: Request) -> Response:
        if self.fault == "splits-bad-type":
            return JSONResponse([{"name": "train", "type": "dev"}, {"name": "test", "type": "test"}])
        return await super().splits(request)

    async def list_tasks(self, request: Request) -> Response:
        if self.fault == "tasks-without-env-name":
            body = await self.split_body(request, {"split"})
            return JSONResponse({"tasks": self.split_tasks(body["split"])})
        return await super().list_tasks(request)

    def split_tasks(self, split: Any) -> list[dict[str, Any]]:
        if self.fault == "invalid-split-200" and split not in reference.TASKS:
            return []
        return super().split_tasks(split)

    async def num_tasks(self, request: Request) -> Response:
        if self.fault == "index-api-off":
            body = await self.split_body(request, {"split"})
            return JSONResponse({"num_tasks": len(self.split_tasks(body["split"])) + 1})
        return await super().num_tasks(request)

    async def task_range(self, request: Request) -> Response:
        if self.fault == "task-range-ignores-start":
            body = await self.split_body(request, {"split", "start", "stop"})
            return JSONResponse({"tasks": self.split_tasks(body["split"])[: body.get("stop")], "env_name": ENV})
        return await super().task_range(request)

    async def task(self, request: Request) -> Response:
        if self.fault == "index-out-of-range-200":
            body = await self.split_body(request, {"split", "index"})
            tasks = self.split_tasks(body["split"])
            return JSONResponse({"task": tasks[int(body["index"]) % len(tasks)]})
        return await super().task(request)

    # -- sessions

    def new_sid(self) -> str:
        if self.fault == "duplicate-session-ids" and next(self._sids) in (2, 3):
            return "11111111-1111-4111-8111-111111111111"  # the third and fourth answers share one id
        return super().new_sid()

    async def create_session(self, request: Request) -> Response:
        if self.fault == "create-session-no-id":
            return JSONResponse({})
        return await super().create_session(request)

    def sid_header(self, request: Request) -> str:
        if self.fault == "missing-header-200" and not request.headers.get("x-session-id", "").strip():
            return "shared-default-session"
        return super().sid_header(request)

    def task_of(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.fault == "both-sources-accepted" and isinstance(body.get("task_spec"), dict):
            return dict(body["task_spec"])
        return super().task_of(body)

    async def create(self, request: Request) -> Response:
        if self.fault == "duplicate-create-accepted":
            self.episodes.pop(request.headers.get("x-session-id", "").strip(), None)
        if self.fault == "create-wrong-sid":
            response = await super().create(request)
            return JSONResponse({"sid": "someone-else"}) if response.status_code == 200 else response
        if self.fault == "missing-header-200":
            self.episodes.pop("shared-default-session", None)
        return await super().create(request)

    async def prompt(self, request: Request) -> Response:
        if self.fault == "prompt-not-blocks":
            self.live(request)
            return JSONResponse({"prompt": "Count with step."})
        if self.fault == "setup-not-blocking":
            episode = self.live(request)
            if episode.sid not in self._asked:  # the first prompt of a session comes before its setup
                self._asked.add(episode.sid)
                return self.refuse(409, "setup still running")
        return await super().prompt(request)

    def live(self, request: Request) -> Episode:
        if self.fault == "unknown-sid-200":
            sid = self.sid_header(request)
            if sid not in self.episodes:
                self.episodes[sid] = Episode(sid, reference.TASKS["train"][0])
        return super().live(request)

    async def ping(self, request: Request) -> Response:
        if self.fault == "pings-do-not-keep-alive":
            episode = self.episodes.get(request.headers.get("x-session-id", "").strip())
            if episode is not None and time.monotonic() - episode.last_active <= self.idle_expiry:
                return JSONResponse({"status": "ok"})  # answers without counting as activity
        if self.fault == "ping-wrong-body":
            try:
                self.live(request)
            except Refusal as refusal:
                return self.refuse(refusal.status, refusal.detail)
            return JSONResponse({"ok": True})
        return await super().ping(request)

    async def delete(self, request: Request) -> Response:
        sid = request.headers.get("x-session-id", "").strip()
        if self.fault == "session-outlives-delete" and sid:
            return JSONResponse({"sid": sid})
        if self.fault == "call-after-delete-runs" and sid in self.episodes:
            self._deleted[sid] = self.episodes[sid]
        if self.fault == "delete-unknown-500" and request.url.path == "/delete":
            if sid and sid not in self.episodes:
                return self.refuse(500, "KeyError: no such session")
        return await super().delete(request)

    async def delete_session(self, request: Request) -> Response:
        if self.fault == "delete-session-405":
            return self.refuse(405, "Method Not Allowed")
        return await super().delete_session(request)

    # -- errors

    def refuse(self, status: int, detail: Any) -> Response:
        if self.fault == "errors-without-detail":
            return JSONResponse({"error": detail}, status_code=status)
        return super().refuse(status, detail)

    async def body(self, request: Request) -> dict[str, Any]:
        if self.fault == "500-on-bad-body":
            try:
                json.loads(await request.body() or b"null")
            except ValueError:
                raise Refusal(500, "JSONDecodeError: Expecting property name") from None
        return await super().body(request)

    # -- tools

    async def call(self, request: Request) -> Response:
        sid = request.headers.get("x-session-id", "").strip()
        if self.fault == "call-after-delete-runs" and sid in self._deleted and sid not in self.episodes:
            self.episodes[sid] = self._deleted[sid]  # the deleted session still answers calls
            try:
                return await super().call(request)
            finally:
                del self.episodes[sid]
        if self.fault == "raising-tool-500" and (await self.body(request)).get("name") == "fail":
            return self.refuse(500, "RuntimeError: the fail tool raised, as it always does")
        if self.fault == "missing-input-accepted":
            body = await self.body(request)
            if isinstance(body.get("name"), str) and "input" not in body:
                episode = self.live(request)
                result = await self.run_tool(episode, body["name"], {})
                return self.call_stream(self.encode_result(json.dumps(result)))
        if self.fault == "tool-runs-twice-on-resume":
            body = await self.body(request)
            if body.get("task_id") in self.tasks:
                episode = self.live(request)
                again = asyncio.ensure_future(self.run_tool(episode, body["name"], body["input"]))
                self.tasks[body["task_id"]] = (again, time.monotonic())
        return await super().call(request)

    def call_stream(self, events: Any) -> Response:
        if self.fault == "call-json-content-type":
            return self.event_stream(events, media_type="application/json")
        return super().call_stream(events)

    def new_task_id(self) -> str:
        if self.fault == "one-task-id-for-all-calls":
            return "0" * 32
        return super().new_task_id()

    def task_id_event(self, task_id: str) -> bytes:
        if self.fault == "first-event-not-task-id":
            return sse("id", task_id)
        return super().task_id_event(task_id)

    def error_event(self, message: str) -> bytes:
        if self.fault == "raising-tool-cut":
            return b""
        if self.fault == "raising-tool-drops-connection" and message != "unknown task_id":
            raise ConnectionAbortedError(message)  # the stream breaks off mid-body
        return super().error_event(message)

    def encode_result(self, text: str) -> list[bytes]:
        events = super().encode_result(text)
        if self.fault == "no-terminal-event":
            return events[:-1]
        if self.fault == "events-after-end":
            return [*events, sse("status", "{}")]
        if self.fault == "chunks-dont-reassemble" and len(events) > 2:
            return events[1:]
        return events

    def output(self, text: str, reward: float | None, finished: bool) -> dict[str, Any]:
        result = super().output(text, reward, finished)
        if self.fault == "string-reward" and reward is not None:
            result["output"]["reward"] = str(reward)
        if self.fault == "nan-reward" and reward is not None:
            result["output"]["reward"] = float("nan")
        if self.fault == "finished-as-string":
            result["output"]["finished"] = str(finished).lower()
        if self.fault == "envelope-without-ok":
            del result["ok"]
        return result

    def input_problem(self, name: str, given: dict[str, Any]) -> str:
        return "" if self.fault == "bad-input-runs" else super().input_problem(name, given)

    async def run_tool(self, episode: Episode, name: str, given: dict[str, Any]) -> dict[str, Any]:
        if self.fault == "unknown-tool-runs" and name not in {tool["name"] for tool in reference.TOOLS}:
            return self.step(episode, "ran")
        if self.fault == "reward-after-finished":
            episode.finished = False
        return await super().run_tool(episode, name, given)
