"""A recorded OpenEnv `/ws` session: JSON messages out, decoded replies back.

Replies never raise: a silent, closed or undecodable target gives a `Reply`
that says so, so a phase can judge it like any other answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from checks.core import PhaseContext, summarize, truncate
from checks.openenv.facts import facts
from checks.wire import Closed, NoReply, WireSocket, open_websocket

ERROR_CODES = frozenset({
    "INVALID_JSON", "UNKNOWN_TYPE", "VALIDATION_ERROR", "EXECUTION_ERROR",
    "CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR",
})
# The errors a server may send unasked, right before it closes the session.
CLOSING_CODES = frozenset({"CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR"})
FRAME_CAP = 16 * 1024 * 1024
# How long a session listens for a greeting before its first message (a greeting comes at once).
QUIET_BEFORE = 0.3


def ws_url(base_url: str) -> str:
    """The target's /ws endpoint: http -> ws, https -> wss, keeping any path prefix."""
    parts = urlsplit(base_url.strip())
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + "/ws", "", ""))


def summarize_frame(data: bytes | str) -> tuple[str, str]:
    if isinstance(data, bytes):
        return "binary", f"<{len(data)} bytes>"
    try:
        return "json", summarize(json.loads(data))
    except (ValueError, RecursionError):
        return "text", repr(truncate(data, 200))


@dataclass
class Reply:
    """One frame from the target, or why none came (`failure`)."""

    message: Any = None
    is_json: bool = False
    binary: bool = False
    raw: str = ""
    failure: str | None = None  # "no reply within 3s", "closed by target with code 1000 ..."
    closed: Closed | None = None

    @property
    def kind(self) -> str | None:
        value = self.message.get("type") if isinstance(self.message, dict) else None
        return value if isinstance(value, str) else None

    @property
    def data(self) -> Any:
        return self.message.get("data") if isinstance(self.message, dict) else None

    @property
    def code(self) -> str | None:
        data = self.data
        return data.get("code") if self.kind == "error" and isinstance(data, dict) else None

    def describe(self) -> str:
        if self.failure is not None:
            return self.failure
        if self.binary:
            return f"a binary frame of {len(self.raw)} bytes"
        return summarize(self.message, 300) if self.is_json else f"non-JSON text {truncate(self.raw, 120)!r}"


def decode_frame(data: bytes | str) -> Reply:
    """A received frame as a Reply; never raises, whatever the target sent."""
    if isinstance(data, bytes):
        return Reply(binary=True, raw=data.decode("latin-1"))
    try:
        return Reply(message=json.loads(data), is_json=True, raw=data)
    except (ValueError, RecursionError):  # RecursionError: nested too deep to decode, so not usable JSON
        return Reply(raw=data)


class JsonSession:
    """One /ws connection speaking JSON text frames."""

    def __init__(self, socket: WireSocket) -> None:
        self.socket = socket
        self.pending: list[Reply] = []  # frames read early and put back

    @property
    def transcript(self):
        return self.socket.transcript

    async def send(self, message: Any) -> str | None:
        """Send one JSON message; returns why it could not be sent, if so."""
        return await self.send_raw(json.dumps(message), summarize(message))

    async def send_raw(self, data: str | bytes, summary: str) -> str | None:
        try:
            await self.socket.send(data, summary)
        except (Closed, NoReply) as exc:
            return str(exc)
        return None

    async def recv(self, timeout: float | None = None) -> Reply:
        if self.pending:
            return self.pending.pop(0)
        try:
            data = await self.socket.recv(timeout)
        except NoReply as exc:
            return Reply(failure=f"no reply: {exc}")
        except Closed as exc:
            return Reply(failure=str(exc), closed=exc)
        return decode_frame(data)

    async def request(self, message: Any) -> Reply:
        # A target that closed after an unprompted frame (CAPACITY_REACHED) still has
        # that frame buffered, so read even when sending failed.
        await self.send(message)
        return await self.recv()

    async def reset(self, data: dict[str, Any] | None = None) -> Reply:
        return await self.request({"type": "reset", "data": dict(data or {})})

    async def step(self, action: Any) -> Reply:
        return await self.request({"type": "step", "data": action})

    async def state(self) -> Reply:
        return await self.request({"type": "state"})

    async def close_by_message(self, timeout: float | None = None) -> tuple[Closed | None, list[Reply]]:
        """Send {"type": "close"}; the target's close (None if it stayed open) and frames seen meanwhile."""
        await self.send({"type": "close"})
        try:
            closed = await self.socket.wait_closed(timeout)
        except NoReply:
            return None, []
        frames = getattr(closed, "frames", [])
        return closed, [decode_frame(frame) for frame in frames]

    def drop(self) -> None:
        """Cut the TCP connection without a WebSocket close."""
        self.transcript.note("dropping the TCP connection without a close frame")
        self.transcript.closed(None, "dropped by the checker", "checker")
        self.socket.connection.transport.abort()

    async def close(self) -> None:
        await self.socket.close()

    async def __aenter__(self) -> JsonSession:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()


async def open_session(ctx: PhaseContext, label: str, timeout: float | None = None) -> JsonSession:
    """A recorded /ws session. Raises TargetUnreachable or HandshakeFailed like `open_websocket`.

    Once the session phase has seen the server greet every new session unasked
    (failing openenv.ws.unprompted), the greeting is read past here, so that the
    other clauses are judged on the replies themselves and not on a shifted stream.
    """
    transcript = ctx.report.transcript(label)
    socket = await open_websocket(
        ws_url(ctx.url), transcript, timeout=timeout or ctx.timeout, max_size=FRAME_CAP,
        summarize=summarize_frame,
    )
    session = JsonSession(socket)
    if facts(ctx).greets:
        first = await session.recv(min(ctx.timeout, QUIET_BEFORE))
        if first.failure is None and first.code in CLOSING_CODES:  # a refusal, not a greeting: keep it
            session.pending.append(first)
        elif first.failure is None:
            transcript.note("read past the greeting (judged once, under openenv.ws.unprompted)")
    return session
