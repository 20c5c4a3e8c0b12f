"""A WebSocket client connection that writes everything it sees into a transcript.

Every step is bounded: opening, each receive, each send, closing. Frames
larger than `max_size` are refused by the library before they are buffered,
and what the checker writes is bounded too: the library answers every ping
with a pong as it reads, so a target that pings without reading would make
the checker's write buffer grow without limit. Reading stops instead while
`WRITE_BACKLOG_LIMIT` bytes wait to be sent, which leaves the flood to TCP
flow control; a send or close that cannot drain counts against its deadline.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import socket
import ssl
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

import websockets
import websockets.asyncio.client as ws_client
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.frames import DATA_OPCODES, Frame
from websockets.protocol import Event
from websockets.proxy import get_proxy
from websockets.uri import parse_uri

from checks.errors import Closer, NoReply, PeerClosed, Refused, TargetUnreachable
from checks.evidence import Transcript, truncate
from checks.pinning import address_for

DEFAULT_FRAME_CAP = 64 * 1024 * 1024
# Unsent bytes at which the checker stops reading. Above the largest frame a suite
# sends (a few MiB), so a target that merely reads slowly is never cut off.
WRITE_BACKLOG_LIMIT = 8 * 1024 * 1024


def close_details(exc: ConnectionClosed) -> PeerClosed:
    """Who closed, with which code and reason, from a websockets ConnectionClosed."""
    if exc.rcvd is not None:
        return PeerClosed(by="peer", code=exc.rcvd.code, reason=exc.rcvd.reason)
    if exc.sent is not None:
        # We closed first, e.g. 1009 for an oversized frame or 1002 for a bad one.
        return PeerClosed(by="checker", code=exc.sent.code, reason=exc.sent.reason)
    return PeerClosed(by="network", reason="no close frame")


def transcript_closer(by: Closer) -> str:
    """How a transcript names who closed: the peer under test is the "target" there."""
    return "target" if by == "peer" else by


class _BoundedConnection(ws_client.ClientConnection):
    """The library's client connection, bounded where the library is not.

    It stops reading while its writes back up: without that, each ping read
    queues a pong in the transport's write buffer, which grows as fast as the
    target sends when the target never reads. And it keeps no copy of a
    received frame: the library's parser holds on to the last frame it parsed
    for as long as the connection object lives, which for a big frame is a
    second copy of the message per connection, kept even after closing.
    """

    backlog_noted: Callable[[int], None] | None = None
    _reading_held = False

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        backlog = self.transport.get_write_buffer_size()
        if backlog > WRITE_BACKLOG_LIMIT and not self._reading_held:
            self._reading_held = True
            self.transport.pause_reading()
            if self.backlog_noted is not None:
                self.backlog_noted(backlog)

    def process_event(self, event: Event) -> None:
        if isinstance(event, Frame) and event.opcode in DATA_OPCODES:
            handed_on = dataclasses.replace(event)
            event.data = b""  # the parser's reference; the message queue keeps handed_on's
            event = handed_on
        super().process_event(event)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._reading_held:
            self._reading_held = False
            if not self.recv_messages.paused:  # the message queue may be holding reading too
                self.transport.resume_reading()


Summarizer = Callable[[bytes | str], tuple[str, str]]


def _default_summary(data: bytes | str) -> tuple[str, str]:
    if isinstance(data, str):
        return "text", repr(truncate(data, 200))
    return "binary", f"<{len(data)} bytes>"


class WireSocket:
    """One recorded connection. `summarize(data) -> (kind, summary)` renders received frames."""

    def __init__(
        self,
        connection: ws_client.ClientConnection,
        transcript: Transcript,
        timeout: float,
        summarize: Summarizer = _default_summary,
    ) -> None:
        self.connection = connection
        self.transcript = transcript
        self.timeout = timeout
        self.summarize = summarize
        self.closed: PeerClosed | None = None
        if isinstance(connection, _BoundedConnection):
            connection.backlog_noted = self._note_backlog

    def _note_backlog(self, backlog: int) -> None:
        self.transcript.note(
            f"{backlog} bytes (pongs and frames) wait to be sent: the target is not reading; "
            "the checker stops reading until they drain"
        )

    @property
    def backed_up(self) -> bool:
        """Whether more than WRITE_BACKLOG_LIMIT bytes wait to be sent (the target is not reading)."""
        return self.connection.transport.get_write_buffer_size() > WRITE_BACKLOG_LIMIT

    @property
    def extensions(self) -> list[str]:
        return [ext.name for ext in self.connection.protocol.extensions]

    async def send(self, data: bytes | str, summary: str) -> None:
        """Send one frame (bytes: binary, str: text). Raises PeerClosed if the connection has ended."""
        kind = "text" if isinstance(data, str) else "binary"
        self.transcript.sent(kind, len(data), summary)
        try:
            await asyncio.wait_for(self.connection.send(data), timeout=self.timeout)
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        except TimeoutError:
            self.transcript.note(f"sending did not finish within {self.timeout:g}s")
            raise NoReply(f"sending did not finish within {self.timeout:g}s", self.timeout) from None

    async def recv(self, timeout: float | None = None) -> bytes | str:
        """The next frame. Raises NoReply after the deadline, PeerClosed when the connection ends."""
        timeout = self.timeout if timeout is None else timeout
        try:
            data = await asyncio.wait_for(self.connection.recv(), timeout=timeout)
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        except TimeoutError:
            self.transcript.note(f"nothing arrived within {timeout:g}s")
            raise NoReply(f"nothing arrived within {timeout:g}s", timeout) from None
        try:
            kind, summary = self.summarize(data)
        except Exception as exc:  # a summary must never take the checker down
            kind, summary = _default_summary(data)
            summary += f" (not decodable: {truncate(str(exc), 120)})"
        self.transcript.received(kind, len(data), summary)
        return data

    async def wait_closed(self, timeout: float | None = None) -> tuple[PeerClosed, list[bytes | str]]:
        """Read until the target closes: how it closed, and the frames that arrived meanwhile (recorded too).

        Raises NoReply if it is still open at the deadline.
        """
        timeout = self.timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        frames: list[bytes | str] = []
        while True:
            left = end - loop.time()
            if left <= 0:
                raise NoReply(f"the connection was still open after {timeout:g}s", timeout)
            try:
                frames.append(await self.recv(left))
            except PeerClosed as closed:
                return closed, frames
            if len(frames) > 64:  # a flood of frames is an answer, not a close
                raise NoReply(f"the connection was still open after {timeout:g}s", timeout)

    def _closed(self, exc: ConnectionClosed) -> PeerClosed:
        closed = close_details(exc)
        self.transcript.closed(closed.code, closed.reason, transcript_closer(closed.by))
        self.closed = closed
        return closed

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close politely within min(timeout, 2 s); abort at once when that cannot work.

        A close frame behind a backlog the target does not read would never be
        sent, and a phase being cancelled at its deadline must not wait at all.
        """
        if self.closed is None:
            self.transcript.closed(code, reason, "checker")
        task = asyncio.current_task()
        if self.backed_up or (task is not None and task.cancelling()):
            self.connection.transport.abort()
            return
        try:
            await asyncio.wait_for(self.connection.close(code, reason), timeout=min(self.timeout, 2.0))
        except Exception:
            self.connection.transport.abort()

    async def __aenter__(self) -> WireSocket:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()


class _connect_without_redirects(ws_client.connect):
    """The library's connect, except that a redirect ends the handshake.

    A target's redirect is an answer to record, not a place to go: following
    it would let a target send the checker to any address, past the network
    allow-list a service checks against the target's own address.
    """

    def process_redirect(self, exc: Exception) -> Exception | str:
        return exc


def _pinned_destination(url: str) -> dict[str, Any]:
    """`host`/`port` for the TCP connection when the run pinned the URL's host (the URI still names it)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "wss" else 80)
    except ValueError:
        return {}  # the library reports the bad URI
    address = address_for(host)
    return {} if address == host else {"host": address, "port": port}


@functools.lru_cache(maxsize=64)
def _proxy_for(url: str) -> str | Literal[True] | None:
    """The proxy the library would take from the environment for `url`, looked up once per URL: it reads
    the whole environment twice a connection otherwise, and a run opens a hundred connections."""
    try:
        return get_proxy(parse_uri(url))
    except InvalidURI:
        return True  # the library's own lookup, which reports the bad URI


async def open_websocket(
    url: str,
    transcript: Transcript,
    *,
    timeout: float,
    max_size: int | None = DEFAULT_FRAME_CAP,
    compression: str | None = None,
    headers: dict[str, str] | None = None,
    summarize: Summarizer = _default_summary,
    ssl_context: ssl.SSLContext | None = None,
) -> WireSocket:
    """Open a recorded connection.

    Raises TargetUnreachable when nothing accepts the TCP connection (refused,
    unknown host, no route) and Refused when something does but the
    WebSocket handshake does not complete within `timeout` (`status`: the
    handshake's HTTP status, where one came).
    """
    transcript.note(f"connect {url}" + (f" offering {compression}" if compression else ""))
    destination: dict[str, Any] = _pinned_destination(url)
    if ssl_context is not None:
        destination["ssl"] = ssl_context
    try:
        connection = await _connect_without_redirects(
            url,
            **destination,
            compression=compression,
            max_size=max_size,
            open_timeout=timeout,
            close_timeout=min(timeout, 2.0),
            ping_interval=None,
            create_connection=_BoundedConnection,
            proxy=_proxy_for(url),
            additional_headers=headers,
            # Keep queued frames bounded too: a flood is read one frame at a time.
            max_queue=4,
            user_agent_header="rlconform",
        )
    except (ConnectionRefusedError, socket.gaierror, InvalidURI) as exc:
        transcript.note(f"could not connect: {exc}")
        raise TargetUnreachable(f"{url}: {exc}") from None
    except OSError as exc:
        transcript.note(f"could not connect: {exc}")
        raise TargetUnreachable(f"{url}: {exc}") from None
    except (InvalidHandshake, TimeoutError, EOFError) as exc:
        detail = truncate(str(exc) or type(exc).__name__, 200)
        transcript.note(f"handshake failed: {detail}")
        status = exc.response.status_code if isinstance(exc, InvalidStatus) else None
        raise Refused(detail, status=status) from None
    transcript.note(
        "connected"
        + (
            f", extensions: {', '.join(e.name for e in connection.protocol.extensions)}"
            if connection.protocol.extensions
            else ""
        )
    )
    return WireSocket(connection, transcript, timeout, summarize)


__all__ = [
    "NoReply",
    "PeerClosed",
    "Refused",
    "WireSocket",
    "open_websocket",
    "close_details",
    "transcript_closer",
    "DEFAULT_FRAME_CAP",
    "WRITE_BACKLOG_LIMIT",
    "websockets",
]
