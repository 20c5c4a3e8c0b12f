"""The session server's routes, over the shared recorded client (`checks.http_client`).

A session phase cannot judge anything from a request that got no answer, so
here no usable answer stops the phase (`PhaseStopped`) rather than reading as
a status-0 reply; an unreachable target still stops the run.
"""

from __future__ import annotations

from typing import Any

from checks.errors import Malformed, NoReply, PeerClosed, PhaseStopped, TargetUnreachable
from checks.evidence import Transcript
from checks.http_client import HttpClient, Reply, reason_of
from checks.http_options import HttpOptions

BODY_CAP = 32 * 1024 * 1024  # records and samples blobs of a long session are large


class SessionClient:
    """The routes over one recorded client and transcript. An unreachable target raises TargetUnreachable,
    no usable answer PhaseStopped. (A wrapper, not a subclass: `get` here takes a session id, not a path.)"""

    def __init__(
        self, base_url: str, transcript: Transcript, timeout: float, options: HttpOptions | None = None
    ) -> None:
        self.http = HttpClient(
            base_url,
            transcript,
            timeout,
            options or HttpOptions(),
            body_cap=BODY_CAP,
            shown=(300, 160),
            json_when_declared=True,
        )
        self.transcript = transcript
        self.client = self.http.client  # the httpx client, with the options' headers

    async def __aenter__(self) -> SessionClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.http.close()

    async def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None) -> Reply:
        try:
            return await self.http.exchange(method, path, body, raw)
        except TargetUnreachable:
            raise
        except (NoReply, Malformed, PeerClosed) as exc:
            raise PhaseStopped(f"{method} {path}: no usable answer: {reason_of(exc)}", self.transcript) from None

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
