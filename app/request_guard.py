"""Checks every HTTP request passes before any route runs, and headers every response gets."""

from __future__ import annotations

from urllib.parse import unquote

from fastapi.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.hostcheck import AllowedHosts
from app.textsafe import UNSTORABLE

MAX_BODY_BYTES = 1024 * 1024  # a target or run request is a few kilobytes; more is a mistake or an attack


async def _answer(scope: Scope, receive: Receive, send: Send, status: int, detail: str) -> None:
    await JSONResponse({"detail": detail}, status_code=status)(scope, receive, send)


# No page may be framed by another site (a framed Run or Cancel button could be clicked blind).
PAGE_HEADERS = [(b"x-frame-options", b"DENY"), (b"x-content-type-options", b"nosniff")]


def _with_page_headers(send: Send) -> Send:
    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *PAGE_HEADERS]}
        await send(message)

    return send_with_headers


class RequestGuard:
    """Refuses, before any route runs, what no route can use; marks every response unframeable.

    - a URL whose path (404) or query (422) holds NUL or an unpaired surrogate: such a
      name or value matches no row, and PostgreSQL refuses the query outright;
    - a request body over MAX_BODY_BYTES (413), announced or streamed;
    - a `Host` the service is not reached by (400): a foreign name pointed at this
      machine (DNS rebinding) would make the pages and the API same-origin with its site.
    """

    def __init__(
        self, app: ASGIApp, allowed_hosts: AllowedHosts | None = None, max_body_bytes: int = MAX_BODY_BYTES
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts or AllowedHosts(["*"])
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_page_headers(send)
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
        if not self.allowed_hosts.admits(host):
            shown = host[:100] if host else "(none)"
            detail = f"Host {shown!r} is not a name this service answers to; add it to RLCONFORM_ALLOWED_HOSTS"
            await _answer(scope, receive, send, 400, detail)
            return
        if UNSTORABLE.search(scope.get("path", "")):
            await _answer(scope, receive, send, 404, "the URL contains a NUL character or an unpaired surrogate")
            return
        if UNSTORABLE.search(unquote(scope.get("query_string", b"").decode("latin-1"))):
            await _answer(scope, receive, send, 422, "the URL contains a NUL character or an unpaired surrogate")
            return
        too_large = f"the request body is over {self.max_body_bytes} bytes"
        declared = dict(scope.get("headers", [])).get(b"content-length", b"")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _answer(scope, receive, send, 413, too_large)
            return
        if scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        # Read the body here (bounded), then hand it on, so a streamed body cannot exceed the limit either.
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_body_bytes:
                await _answer(scope, receive, send, 413, too_large)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)
