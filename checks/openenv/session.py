"""A recorded OpenEnv `/ws` session: JSON messages out, decoded replies back.

A closed or undecodable reply is a `Reply` that says so, for the phase to judge
like any other answer. A reply that does not come in time is different: the
server may still send it, and then every later frame would be read as the reply
to the wrong message. So a missing reply ends the session and stops the phase
(`PhaseStopped`), unless the caller asked to judge that silence itself. Every
wait for a reply is logged as a `Wait` (what was asked, whether it was answered
in time) for `judging.reply_in_time` to decide `openenv.ws.reply-in-time`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from checks.core import NoReply, PhaseStopped, Transcript, summarize, truncate
from checks.errors import PeerClosed, Refused
from checks.openenv.options import Ctx
from checks.wire import WireSocket, open_websocket

ERROR_CODES = frozenset(
    {
        "INVALID_JSON",
        "UNKNOWN_TYPE",
        "VALIDATION_ERROR",
        "EXECUTION_ERROR",
        "CAPACITY_REACHED",
        "FACTORY_ERROR",
        "SESSION_ERROR",
    }
)
# The errors a server may send unasked, right before it closes the session.
CLOSING_CODES = frozenset({"CAPACITY_REACHED", "FACTORY_ERROR", "SESSION_ERROR"})
FRAME_CAP = 16 * 1024 * 1024
# How long a session listens for a greeting before its first message (a greeting comes at once).
QUIET_BEFORE = 0.3
T = TypeVar("T")


def ws_url(base_url: str, query: str = "", endpoint: str = "/ws") -> str:
    """The target's /ws (or another WebSocket) endpoint: http -> ws, https -> wss, keeping any path prefix."""
    parts = urlsplit(base_url.strip())
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + endpoint, query, ""))


def summarize_frame(data: bytes | str) -> tuple[str, str]:
    if isinstance(data, bytes):
        return "binary", f"<{len(data)} bytes>"
    try:
        return "json", summarize(json.loads(data))
    except (ValueError, RecursionError):
        return "text", repr(truncate(data, 200))


@dataclass(frozen=True)
class Wait:
    """One wait for a reply: what was asked, the timeout, and whether a frame (or a close) came in time."""

    asked: str
    timeout: float
    answered: bool
    transcript: Transcript


@dataclass
class Reply:
    """One frame from the target, or why none came (`failure`)."""

    message: Any = None
    is_json: bool = False
    binary: bool = False
    raw: str = ""
    failure: str | None = None  # "no reply within 3s", "closed by target with code 1000 ..."
    closed: PeerClosed | None = None

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

    def __init__(self, socket: WireSocket, waits: list[Wait]) -> None:
        self.socket = socket
        self.waits = waits  # the run's log of waits for a reply, this session's appended
        self.pending: list[Reply] = []  # frames read early and put back
        # Set, and the socket closed, when a reply did not come in time: "reset got no reply within 3s".
        self.lost: str | None = None

    @property
    def transcript(self) -> Transcript:
        return self.socket.transcript

    def stop_lost(self) -> NoReturn:
        """Stop the phase: this session's frames can no longer be matched to its messages."""
        raise PhaseStopped(
            f"the session lost its reply order after {self.lost} (see openenv.ws.reply-in-time)", self.transcript
        )

    async def send(self, message: Any) -> str | None:
        """Send one JSON message; returns why it could not be sent, if so."""
        return await self.send_raw(json.dumps(message), summarize(message))

    async def send_raw(self, data: str | bytes, summary: str) -> str | None:
        try:
            await self.socket.send(data, summary)
        except (PeerClosed, NoReply) as exc:
            return str(exc)
        return None

    async def listen(self, timeout: float) -> Reply:
        """The next frame when none was asked for: silence is the expected answer, not a lost session."""
        if self.pending:
            return self.pending.pop(0)
        if self.lost is not None:
            return Reply(failure=f"not listened: the session was closed after {self.lost}")
        try:
            data = await self.socket.recv(timeout)
        except NoReply as exc:
            return Reply(failure=f"no reply: {exc}")
        except PeerClosed as exc:
            return Reply(failure=str(exc), closed=exc)
        return decode_frame(data)

    async def reply(self, asked: str, judge_silence: bool = False) -> Reply:
        """The reply to what was sent last; it must come within the step timeout.

        Silence is logged as an unanswered `Wait`, closes the session and stops the
        phase (PhaseStopped). With `judge_silence` the caller's own clause judges the
        silence instead: the session is still closed, and the Reply says why.
        """
        if self.pending:
            return self.pending.pop(0)
        if self.lost is not None:
            self.stop_lost()
        try:
            data = await self.socket.recv()
        except NoReply as exc:
            timeout = exc.timeout if exc.timeout is not None else self.socket.timeout
            self.lost = f"{asked} got no reply within {timeout:g}s"
            await self._close_lost()
            if judge_silence:
                return Reply(failure=f"no reply: {exc}")
            self.waits.append(Wait(asked, timeout, False, self.transcript))
            self.stop_lost()
        except PeerClosed as exc:
            return Reply(failure=str(exc), closed=exc)
        self.waits.append(Wait(asked, self.socket.timeout, True, self.transcript))
        return decode_frame(data)

    async def _close_lost(self) -> None:
        self.transcript.note(f"{self.lost}: closing the session, whose frames can no longer be matched to messages")
        await self.socket.close(1000, "no reply in time")

    async def request(self, message: dict[str, Any], judge_silence: bool = False) -> Reply:
        if self.lost is not None:
            self.stop_lost()
        # A target that closed after an unprompted frame (CAPACITY_REACHED) still has
        # that frame buffered, so read even when sending failed.
        await self.send(message)
        return await self.reply(str(message.get("type")), judge_silence)

    async def reset(self, data: dict[str, Any] | None = None) -> Reply:
        return await self.request({"type": "reset", "data": dict(data or {})})

    async def step(self, action: Any) -> Reply:
        return await self.request({"type": "step", "data": action})

    async def state(self, judge_silence: bool = False) -> Reply:
        return await self.request({"type": "state"}, judge_silence)

    async def close_by_message(self, timeout: float | None = None) -> tuple[PeerClosed | None, list[Reply]]:
        """Send {"type": "close"}; the target's close (None if it stayed open) and frames seen meanwhile."""
        if self.lost is not None:
            self.stop_lost()
        await self.send({"type": "close"})
        try:
            closed, frames = await self.socket.wait_closed(timeout)
        except NoReply:
            return None, []
        return closed, [decode_frame(frame) for frame in frames]

    def drop(self) -> None:
        """Cut the TCP connection without a WebSocket close."""
        self.transcript.note("dropping the TCP connection without a close frame")
        self.transcript.closed(None, "dropped by the checker", "checker")
        self.socket.connection.transport.abort()

    async def close(self) -> None:
        if self.lost is None:  # a lost session was closed when it was lost
            await self.socket.close()

    async def __aenter__(self) -> JsonSession:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()


async def open_session(ctx: Ctx, label: str, timeout: float | None = None) -> JsonSession:
    """A recorded /ws session; a refused upgrade stops the phase, since every later step needs a session.

    openenv.ws.handshake judges the refusal, once, in the session phase.
    """
    try:
        return await connect_session(ctx, label, timeout)
    except Refused as exc:
        raise PhaseStopped(
            f"no /ws session could be opened ({truncate(str(exc), 200)}); see openenv.ws.handshake"
        ) from None


async def connect_session(ctx: Ctx, label: str, timeout: float | None = None, query: str = "") -> JsonSession:
    """A recorded /ws session. Raises TargetUnreachable or Refused like `open_websocket`.

    Once the session phase has seen the server greet every new session unasked
    (failing openenv.ws.unprompted), the greeting is read past here, so that the
    other clauses are judged on the replies themselves and not on a shifted stream.
    """
    transcript = ctx.report.transcript(label)
    socket = await open_websocket(
        ws_url(ctx.url, query),
        transcript,
        timeout=timeout or ctx.timeout,
        max_size=FRAME_CAP,
        summarize=summarize_frame,
        headers=ctx.options.request_headers() or None,
        ssl_context=ctx.options.websocket_ssl(ws_url(ctx.url)),
    )
    session = JsonSession(socket, ctx.state.waits)
    if ctx.state.greets:
        first = await session.listen(min(ctx.timeout, QUIET_BEFORE))
        if first.failure is None and first.code in CLOSING_CODES:  # a refusal, not a greeting: keep it
            session.pending.append(first)
        elif first.failure is None:
            transcript.note("read past the greeting (judged once, under openenv.ws.unprompted)")
    return session


async def settle_all(*waits: Awaitable[T]) -> list[T]:
    """Await several sessions at once; a failure is raised only once all have settled.

    A plain gather would raise at the first lost session and leave the other
    reads running on sockets that are about to be closed.
    """
    results = await asyncio.gather(*waits, return_exceptions=True)
    failures = [result for result in results if isinstance(result, BaseException)]
    if failures:
        raise failures[0]
    return cast(list[T], results)
