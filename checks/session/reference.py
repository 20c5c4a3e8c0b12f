"""A conforming miles-style session server over a deterministic in-process backend: the suite's known-good target.

    rlconform reference-server session [--tree v1|v2] [--host H] [--port P] [--backend-delay S]

Routes and shapes follow the miles fact sheet: POST /sessions, GET and DELETE
/sessions/{id}, the per-session OpenAI-compatible proxy
/sessions/{id}/v1/chat/completions (records with TITO token ids and float64
logprobs, fake single-chunk streaming), /sessions/{id}/samples as
safetensors, a pass-through for any other /sessions/{id}/... path, and
errors as {"error": "<string>"}. `--tree v1` keeps a linear trajectory with a
one-step rollback; `--tree v2` keeps an append-only tree. For the same agent
script both produce bitwise-identical training samples.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from checks.asgi_server import ServedApp, serve_asgi
from checks.serving import serve_until_interrupted
from checks.session.assembly import path_sample
from checks.session.backend import Backend, BackendReply
from checks.session.samples import WireSample, encode_samples
from checks.session.template import ROLES, render
from checks.session.trajectory import LinearTrajectory, SessionError, Trajectory, TreeTrajectory, Turn

TreeMode = Literal["v1", "v2"]
STRIPPED_META = ("routed_experts", "indexer_topk")


@dataclass
class Session:
    id: str
    trajectory: Trajectory
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    closing: bool = False


def sse(payload: Any) -> bytes:
    return f"data: {json.dumps(payload) if not isinstance(payload, str) else payload}\n\n".encode()


class SessionServer:
    """The HTTP contract. Methods are small so broken variants (tests/zoo) can override one behaviour each."""

    def __init__(self, tree: TreeMode = "v1", backend: Backend | None = None) -> None:
        self.tree = tree
        self.backend = backend or Backend()
        self.instance_id = uuid.uuid4().hex
        self.sessions: dict[str, Session] = {}
        self.app = Starlette(
            routes=[
                Route("/health", self.health, methods=["GET"]),
                Route("/sessions", self.create, methods=["POST"]),
                Route("/sessions/{sid}", self.get_session, methods=["GET"]),
                Route("/sessions/{sid}", self.delete_session, methods=["DELETE"]),
                Route("/sessions/{sid}/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/sessions/{sid}/samples", self.samples, methods=["POST"]),
                Route(
                    "/sessions/{sid}/{path:path}", self.passthrough, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]
                ),
            ]
        )

    # -- shapes a variant may change

    def error(self, status: int, message: str) -> Response:
        return JSONResponse({"error": message}, status_code=status)

    def health_body(self) -> dict[str, Any]:
        return {"status": "ok", "session_server_instance_id": self.instance_id}

    def new_session_id(self) -> str:
        return uuid.uuid4().hex

    def new_trajectory(self) -> Trajectory:
        return TreeTrajectory() if self.tree == "v2" else LinearTrajectory()

    def backend_request(self, body: dict[str, Any], input_ids: list[int]) -> dict[str, Any]:
        """The body as sent to the backend and recorded: TITO ids in, logprobs and meta info forced on, no streaming."""
        sent = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        sent.update(input_ids=input_ids, logprobs=True, return_meta_info=True, no_stop_trim=False)
        return sent

    def make_record(self, sent: dict[str, Any], response: dict[str, Any], requested_at: float) -> dict[str, Any]:
        return {
            "timestamp": time.time(),
            "request_timestamp": requested_at,
            "method": "POST",
            "path": "/v1/chat/completions",
            "request": sent,
            "response": response,
            "status_code": 200,
        }

    def client_reply(self, response: dict[str, Any], asked_logprobs: bool) -> dict[str, Any]:
        """The backend's answer minus replay payloads, and minus the forced logprobs the agent did not ask for."""
        reply: dict[str, Any] = json.loads(json.dumps(response))
        for choice in reply.get("choices", []):
            if not asked_logprobs:
                choice["logprobs"] = None
            for key in STRIPPED_META:
                choice.get("meta_info", {}).pop(key, None)
        return reply

    def session_metadata(self, session: Session) -> dict[str, Any]:
        path = session.trajectory.active_path()
        metadata: dict[str, Any] = {"accumulated_token_ids": path[-1].token_ids if path else [], "max_trim_tokens": 0}
        if path:
            rendered = render(
                path[-1].path_messages, path[-1].record["request"].get("tools"), add_generation_prompt=False
            )
            accumulated = metadata["accumulated_token_ids"]
            same = rendered[: len(accumulated)] == accumulated
            metadata["tito_session_mismatch"] = [] if same else [{"type": "non_assistant_text", "at": len(accumulated)}]
        metadata.update(session.trajectory.metadata())
        return metadata

    def records(self, session: Session) -> list[dict[str, Any]]:
        return [turn.record for turn in session.trajectory.active_path()]

    # -- routes

    async def health(self, request: Request) -> Response:
        return JSONResponse(self.health_body())

    async def create(self, request: Request) -> Response:
        session = Session(self.new_session_id(), self.new_trajectory())
        self.sessions[session.id] = session
        return JSONResponse({"session_id": session.id})

    def find(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None or session.closing:
            raise SessionError(404, f"session not found: session_id={sid}")
        return session

    async def get_session(self, request: Request) -> Response:
        try:
            session = self.find(request.path_params["sid"])
        except SessionError as exc:
            return self.error(exc.status, exc.message)
        return JSONResponse(
            {"session_id": session.id, "records": self.records(session), "metadata": self.session_metadata(session)}
        )

    async def delete_session(self, request: Request) -> Response:
        try:
            session = self.find(request.path_params["sid"])
        except SessionError as exc:
            return self.error(exc.status, exc.message)
        session.closing = True
        self.sessions.pop(session.id, None)
        return Response(status_code=204)

    async def passthrough(self, request: Request) -> Response:
        path = request.path_params["path"]
        if request.method == "GET" and path.rstrip("/") == "v1/models":
            return self.backend_response(self.backend.models())
        return JSONResponse(
            {"error": {"message": f"no route /{path}", "type": "not_found", "param": None, "code": None}}, 404
        )

    def backend_response(self, reply: BackendReply) -> Response:
        return JSONResponse(reply.body, status_code=reply.status)

    async def chat(self, request: Request) -> Response:
        requested_at = time.time()
        try:
            session = self.find(request.path_params["sid"])
            body = await self.read_json(request)
            async with session.lock:
                plan, sent = self.prepare(session, body)
            backend_reply = await self.backend.chat(sent)
            if backend_reply.status != 200:
                return self.backend_response(backend_reply)
            response = backend_reply.body
            self.check_upstream(response)
            async with session.lock:
                self.commit(session, plan, body, sent, response, requested_at)
        except SessionError as exc:
            return self.error(exc.status, exc.message)
        reply = self.client_reply(response, bool(body.get("logprobs")))
        if body.get("stream"):
            return self.stream(reply, bool((body.get("stream_options") or {}).get("include_usage")))
        return JSONResponse(reply)

    async def read_json(self, request: Request) -> dict[str, Any]:
        try:
            body = json.loads(await request.body())
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SessionError(400, f"invalid JSON body: {exc}") from None
        if not isinstance(body, dict):
            raise SessionError(400, "invalid JSON body: not an object")
        return body

    def prepare(self, session: Session, body: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            raise SessionError(400, "messages must be a non-empty list of objects")
        if body.get("chat_template_kwargs") is not None and not isinstance(body["chat_template_kwargs"], dict):
            raise SessionError(400, "chat_template_kwargs must be an object")
        plan = session.trajectory.plan(messages)
        for message in messages:
            if message.get("role") not in ROLES:
                raise SessionError(400, f"role {message.get('role')!r} cannot be appended")
        full = render(messages, body.get("tools"))
        base = plan.base.token_ids if plan.base is not None else []
        if full[: len(base)] != base:
            raise SessionError(500, "tokenization mismatch: stored tokens are not a prefix of the request")
        return plan, self.backend_request(body, base + full[len(base) :])

    def check_upstream(self, response: dict[str, Any]) -> None:
        try:
            choice = response["choices"][0]
            pairs = choice["meta_info"]["output_token_logprobs"]
            ok = choice["message"]["content"] is not None and len(pairs) == choice["meta_info"]["completion_tokens"]
        except (KeyError, IndexError, TypeError):
            ok = False
        if not ok:
            raise SessionError(502, "upstream response error: no usable meta_info.output_token_logprobs")

    def commit(
        self,
        session: Session,
        plan: Any,
        body: dict[str, Any],
        sent: dict[str, Any],
        response: dict[str, Any],
        requested_at: float,
    ) -> None:
        if session.closing:
            return
        choice = response["choices"][0]
        pairs = choice["meta_info"]["output_token_logprobs"]
        turn = Turn(
            messages=body["messages"],
            reply=choice["message"],
            prompt_ids=sent["input_ids"],
            completion_ids=[int(p[1]) for p in pairs],
            logprobs=[float(p[0]) for p in pairs],
            finish_reason=choice["finish_reason"],
            response_id=response["id"],
            record=self.make_record(sent, response, requested_at),
        )
        session.trajectory.commit(plan, turn)

    def stream(self, reply: dict[str, Any], include_usage: bool) -> Response:
        choice = reply["choices"][0]
        delta = {k: v for k, v in choice["message"].items() if v is not None}
        chunk = {
            "id": reply["id"],
            "object": "chat.completion.chunk",
            "created": reply["created"],
            "model": reply["model"],
            "choices": [
                {
                    "index": 0,
                    "delta": delta,
                    "logprobs": choice.get("logprobs"),
                    "finish_reason": choice["finish_reason"],
                }
            ],
        }
        frames = [sse(chunk)]
        if include_usage:
            frames.append(
                sse(
                    {
                        **{k: chunk[k] for k in ("id", "object", "created", "model")},
                        "choices": [],
                        "usage": reply["usage"],
                    }
                )
            )
        frames.append(sse("[DONE]"))

        async def body() -> AsyncIterator[bytes]:
            for frame in frames:
                yield frame

        headers = {"cache-control": "no-cache", "x-accel-buffering": "no"}
        return StreamingResponse(body(), media_type="text/event-stream", headers=headers)

    async def samples(self, request: Request) -> Response:
        try:
            session = self.find(request.path_params["sid"])
            body = await self.read_json(request)
        except SessionError as exc:
            return self.error(exc.status, exc.message)
        max_seq_len = body.get("max_seq_len")
        if max_seq_len is not None and (not isinstance(max_seq_len, int) or max_seq_len < 1):
            return self.error(400, "max_seq_len must be a positive integer or null")
        agent: dict[str, Any] = body["metadata"] if isinstance(body.get("metadata"), dict) else {}
        async with session.lock:
            samples, empty_reason = self.assemble(session, max_seq_len, agent)
            metadata = self.session_metadata(session)
        if self.tree == "v2":
            metadata["agent"] = agent
        return Response(encode_samples(samples, metadata, empty_reason), media_type="application/octet-stream")

    def assemble(
        self, session: Session, max_seq_len: int | None, agent: dict[str, Any]
    ) -> tuple[list[WireSample], str | None]:
        paths = session.trajectory.sample_paths()
        if not paths:
            return [], "no_records"
        samples: list[WireSample] = []
        trained: set[int] = set()
        for path in paths:
            sample = path_sample(path, max_seq_len, trained if self.tree == "v2" else set())
            trained.update(turn.seq for turn in path)
            if sample is None:
                continue
            if self.tree == "v2":
                leaf = path[-1]
                sample.fields["reward"] = agent.get("reward")
                sample.fields["metadata"]["leaf"] = {
                    "node_id": leaf.seq,
                    "parent": leaf.parent,
                    "path_node_ids": [t.seq for t in path],
                    "response_id": leaf.response_id,
                }
            samples.append(sample)
        return samples, None if samples else "all_truncated"


RunningServer = ServedApp[SessionServer]


async def serve_app(server: SessionServer, host: str = "127.0.0.1", port: int = 0) -> RunningServer:
    """Serve `server` here; `port=0` takes a free port from the OS, known before this returns."""
    return RunningServer(server, await serve_asgi(server.app, host, port))


async def start_reference_server(
    host: str = "127.0.0.1", port: int = 0, *, tree: TreeMode = "v1", backend_delay: float = 0.005
) -> RunningServer:
    """Start serving and return at once; `port=0` takes a free port from the OS."""
    return await serve_app(SessionServer(tree, Backend(delay=backend_delay)), host, port)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="rlconform reference-server session", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--tree", choices=("v1", "v2"), default="v1", help="v1: linear trajectory; v2: tree")
    parser.add_argument("--backend-delay", type=float, default=0.005, help="seconds each backend generation takes")
    args = parser.parse_args(argv)
    if not 0 <= args.backend_delay <= 60:
        parser.error("--backend-delay must be 0..60 seconds")

    return serve_until_interrupted(
        lambda: start_reference_server(args.host, args.port, tree=args.tree, backend_delay=args.backend_delay),
        lambda url: f"session reference server ({args.tree}) listening on {url}",
    )
