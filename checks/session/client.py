"""HTTP calls to a session server, each written into a transcript as request and reply."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from checks.core import PhaseStopped, TargetUnreachable, Transcript, summarize, truncate
from checks.http_options import HttpOptions, http_client

BODY_CAP = 32 * 1024 * 1024


@dataclass
class Reply:
    status: int
    content_type: str
    raw: bytes
    body: Any = None  # parsed JSON, or None
    headers: list[tuple[str, str]] = field(default_factory=list)
    method: str = ""  # the request this answers, for evidence
    path: str = ""
    sent: Any = None  # its JSON body, or its raw text

    @property
    def is_json(self) -> bool:
        return self.body is not None

    def describe(self, limit: int = 300) -> str:
        shown = (
            summarize(self.body, limit)
            if self.is_json
            else repr(truncate(self.raw[:400].decode("utf-8", "replace"), 160))
        )
        return f"{self.status} {self.content_type or '(no content type)'} {shown}"

    def error_message(self) -> str | None:
        """miles' error shape: {"error": "<string>"}; None when the body is not that."""
        if isinstance(self.body, dict) and isinstance(self.body.get("error"), str):
            return str(self.body["error"])
        return None


class SessionClient:
    """One httpx client for one transcript. A refused connection raises TargetUnreachable, a timeout PhaseStopped."""

    def __init__(
        self, base_url: str, transcript: Transcript, timeout: float, options: HttpOptions | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.transcript = transcript
        self.timeout = timeout
        self.client = http_client(options or HttpOptions(), timeout)

    async def __aenter__(self) -> SessionClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()

    async def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Reply:
        content = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        shown = f" {summarize(body, 300)}" if body is not None else (f" {truncate(repr(raw), 120)}" if raw else "")
        self.transcript.sent("http", len(content or b""), f"{method} {path}{shown}")
        headers = {"content-type": "application/json"} if content is not None else {}
        try:
            response = await self.client.request(method, self.base_url + path, content=content, headers=headers)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self.transcript.note(f"could not connect: {truncate(str(exc) or type(exc).__name__, 200)}")
            raise TargetUnreachable(f"{self.base_url}: {exc}", self.transcript) from None
        except httpx.HTTPError as exc:
            detail = f"{type(exc).__name__}: {truncate(str(exc), 120)}"
            why = f"{method} {path}: no usable answer within {self.timeout:g}s ({detail})"
            self.transcript.note(why)
            raise PhaseStopped(why, self.transcript) from None
        data = response.content[:BODY_CAP]
        reply = Reply(
            response.status_code,
            response.headers.get("content-type", ""),
            data,
            headers=list(response.headers.multi_items()),
            method=method,
            path=path,
            sent=body if raw is None else raw.decode("utf-8", "replace"),
        )
        if reply.content_type.startswith("application/json"):
            try:
                reply.body = json.loads(data)
            except (UnicodeDecodeError, json.JSONDecodeError):
                reply.body = None
        self.transcript.received("http", len(data), reply.describe())
        return reply

    # -- the session server's routes

    async def health(self) -> Reply:
        return await self.call("GET", "/health")

    async def create(self) -> Reply:
        return await self.call("POST", "/sessions", {})

    async def get(self, sid: str) -> Reply:
        return await self.call("GET", f"/sessions/{sid}")

    async def delete(self, sid: str) -> Reply:
        return await self.call("DELETE", f"/sessions/{sid}")

    async def chat(self, sid: str, body: dict[str, Any]) -> Reply:
        return await self.call("POST", f"/sessions/{sid}/v1/chat/completions", body)

    async def samples(self, sid: str, body: dict[str, Any]) -> Reply:
        return await self.call("POST", f"/sessions/{sid}/samples", body)

    async def new_session(self) -> str:
        """A fresh session's id; a create that is not 200 with a string id stops the phase."""
        reply = await self.create()
        sid = reply.body.get("session_id") if isinstance(reply.body, dict) else None
        if reply.status != 200 or not isinstance(sid, str) or not sid:
            raise PhaseStopped(f"POST /sessions gave {reply.describe(120)}", self.transcript)
        return sid
