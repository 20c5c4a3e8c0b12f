"""The tap's relay: TCP both ways, byte for byte, with a copy of each message offered to the judges.

Each connection is two sockets, each with a protocol (`_Side`) that forwards what it received to
the other socket's transport the moment it arrives (no task, no await on the way), then lets the
kind's reader find messages in that chunk and offers them to the queue. Reading goes into one
buffer per side, reused. Back-pressure passes through: when one transport's write buffer passes
its high-water mark, reading from the other side pauses until it drains, so a slow reader slows
its sender and the tap holds at most a high-water mark per direction. An end of stream is passed
on as a half close and a reset as an abort, so each side sees the other close as it did; a
WebSocket close frame is bytes like any other and reaches the other side unchanged, code and
reason. Judging runs in a process of its own (`judging_process`), or a thread, and never holds
the forwarding.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from checks.tap.arena import Arena
from checks.tap.copies import Copy, Offer

READ_SIZE = 1024 * 1024
# Bytes a transport may hold unsent before the other side's reading pauses (asyncio's default is 64 KiB).
HIGH_WATER = 4 * 1024 * 1024
FORWARD_SAMPLES = 4096


class StreamReader(Protocol):
    """A kind's reader of one direction: messages found in the bytes so far; `end` at end of stream.

    `data` may be a view of the relay's receive buffer, valid only during the call: a reader keeps a copy."""

    def feed(self, data: bytes | memoryview) -> list[Any]: ...


@dataclass
class Opened:
    source: str  # the client's address


@dataclass
class Ended:
    how: str  # "closed" (an end of stream) or "reset"
    by: str  # "client" or "server"


@dataclass
class RelayStats:
    """Counted by the relay (the event loop's thread only)."""

    connections: int = 0
    refused: int = 0
    messages: int = 0
    unjudged: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    reader_faults: list[str] = field(default_factory=list)
    # Nanoseconds from a chunk's read to its forwarded write, the latest FORWARD_SAMPLES of them: the
    # part of the added latency the tap itself can see (the extra loopback hop is the bench's to measure).
    forward_ns: deque[int] = field(default_factory=lambda: deque(maxlen=FORWARD_SAMPLES))

    def forward_latency(self) -> dict[str, float]:
        """p50 and p99 of the recent read-to-forward times in milliseconds (empty before any chunk)."""
        times = sorted(self.forward_ns)
        if not times:
            return {}

        def at(share: float) -> float:
            return round(times[min(len(times) - 1, int(share * len(times)))] / 1e6, 4)

        return {"forward_p50_ms": at(0.5), "forward_p99_ms": at(0.99)}


class _Side(asyncio.BufferedProtocol):
    """One socket of a relayed connection: what it receives goes to `peer`'s transport, then to `reader`."""

    def __init__(self, relay: Relay, sender: str, peer: _Side | None = None) -> None:
        self.relay = relay
        self.sender = sender  # who writes into this socket: "client" or "server"
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        self.reader: StreamReader | None = None
        self.connection = 0
        self.ended = False  # this direction is over (an end of stream, a reset, or the socket gone)
        # Bytes read before the upstream answered. asyncio starts reading after `connection_made`, so
        # pausing there holds them in the kernel; uvloop may deliver a first read anyway, kept here.
        self.early: list[bytes] = []
        if peer is not None:
            peer.peer = self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport, if not always an asyncio.Transport: uvloop's (under uvicorn) is its own class.
        self.transport = cast(asyncio.Transport, transport)
        transport = self.transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.set_write_buffer_limits(high=HIGH_WATER)
        self.relay._sides.add(self)
        if self.sender == "client":
            self.relay._accepted(self)
        else:
            self.relay._paired(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.relay._receive_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        started = time.perf_counter_ns()
        relay = self.relay
        data = relay._receive_buffer()[:nbytes]
        peer = self.peer
        if self.sender == "client" and (peer is None or peer.transport is None):
            self.early.append(bytes(data))  # not paired yet: `_paired` forwards these first
            if self.transport is not None:
                self.transport.pause_reading()
            return
        if peer is not None and peer.transport is not None and not peer.transport.is_closing():
            peer.transport.write(data)  # forwarded before anything else looks at it
            relay.stats.forward_ns.append(time.perf_counter_ns() - started)
            if peer.transport.get_write_buffer_size():
                relay._buffer_kept()  # the transport may hold a view of what it could not send yet
        if self.reader is not None:
            relay._copy(self.connection, self.sender, self.reader, data)

    def eof_received(self) -> bool:
        self._end("closed")
        return True  # keep the socket open for the other direction until it ends too

    def connection_lost(self, exc: Exception | None) -> None:
        self.relay._sides.discard(self)
        self._end("closed" if exc is None else "reset")

    def pause_writing(self) -> None:
        """This socket's unsent bytes passed the high-water mark: stop reading what would add to them."""
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None and not self.peer.transport.is_closing():
            self.peer.transport.resume_reading()

    def _end(self, how: str) -> None:
        """Pass this direction's end on as it came (a half close, or an abort for a reset), once."""
        if self.ended:
            return
        self.ended = True
        peer = self.peer
        sink = peer.transport if peer is not None else None
        if sink is not None:
            if how == "reset" or sink.is_closing():
                sink.abort()
            else:
                try:
                    sink.write_eof()
                except (OSError, RuntimeError):
                    sink.abort()
        if self.reader is not None and not self.relay.stopped:
            end = getattr(self.reader, "end", None)
            if callable(end):
                self.relay._found(self.connection, self.sender, self.reader, end)
            self.relay._offer(self.connection, self.sender, Ended(how, self.sender), 0)
        if peer is None or peer.ended:
            for side in (self, peer):
                if side is not None and side.transport is not None:
                    side.transport.close()


class Relay:
    """Accept on `listen`, connect each client to `upstream`; `readers()` gives a (client, server) reader pair."""

    def __init__(
        self,
        upstream: tuple[str, int],
        readers: Callable[[], tuple[StreamReader, StreamReader]],
        queue: Offer,
        admit: Callable[[str], bool] = lambda source: True,
    ) -> None:
        self.upstream = upstream
        self.readers = readers
        self.queue = queue
        self.admit = admit
        self.stats = RelayStats()
        self.arena: Arena | None = getattr(queue, "arena", None)
        self._ids = itertools.count(1)
        self._gaps: set[int] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._sides: set[_Side] = set()
        self._buffer: memoryview | None = None
        self.stopped = False  # closing: connections end with the tap, their ends are not offered

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port (0: a free port); the port bound."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Side(self, "client"), host, port)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        self.stopped = True
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for side in list(self._sides):  # the tap is stopping: its connections end with it
            if side.transport is not None:
                side.transport.close()

    def _receive_buffer(self) -> memoryview:
        """One buffer every socket reads into: each read is forwarded and copied before the next."""
        if self._buffer is None:
            self._buffer = memoryview(bytearray(READ_SIZE))
        return self._buffer

    def _buffer_kept(self) -> None:
        self._buffer = None  # the next read gets a fresh buffer; this one belongs to the transport now

    def _accepted(self, client: _Side) -> None:
        assert client.transport is not None
        source = str((client.transport.get_extra_info("peername") or ("?",))[0])
        if not self.admit(source):
            self.stats.refused += 1
            client.transport.abort()
            return
        client.transport.pause_reading()  # until the upstream answers
        task = asyncio.get_running_loop().create_task(self._connect(client))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _connect(self, client: _Side) -> None:
        assert client.transport is not None
        loop = asyncio.get_running_loop()
        try:
            await loop.create_connection(lambda: _Side(self, "server", peer=client), *self.upstream)
        except OSError:
            client.transport.abort()  # the upstream refused: the client sees a refusal too
            return
        except asyncio.CancelledError:
            client.transport.abort()
            raise

    def _paired(self, server: _Side) -> None:
        """The upstream answered: the connection is numbered, gets its readers, and the client is read."""
        client = server.peer
        assert client is not None and client.transport is not None and server.transport is not None
        if client.transport.is_closing():  # the client left while the upstream was answering
            server.transport.abort()
            return
        connection = next(self._ids)
        self.stats.connections += 1
        self._offer(connection, "tap", Opened(str((client.transport.get_extra_info("peername") or ("?",))[0])), 0)
        client.reader, server.reader = self.readers()
        if self.arena is not None:  # the judges share memory with the relay: large payloads are gathered there
            for reader in (client.reader, server.reader):
                use = getattr(reader, "use_arena", None)
                if callable(use):
                    use(self.arena)
        client.connection = server.connection = connection
        for chunk in client.early:
            server.transport.write(chunk)
            self._copy(connection, "client", client.reader, memoryview(chunk))
        client.early.clear()
        client.transport.resume_reading()

    def _offer(self, connection: int, sender: str, item: Any, size: int) -> None:
        self.stats.messages += 1
        copy = Copy(connection, sender, item, size, time.monotonic(), connection in self._gaps, self.stats.messages)
        if self.queue.offer(copy):
            self._gaps.discard(connection)
        else:
            self.stats.unjudged += 1
            self._gaps.add(connection)
            if self.arena is not None:
                self.arena.free(getattr(item, "slots", []))  # dropped: the judges will never free them

    def _copy(self, connection: int, sender: str, reader: StreamReader, chunk: memoryview) -> None:
        if sender == "client":
            self.stats.bytes_up += len(chunk)
        else:
            self.stats.bytes_down += len(chunk)
        self._found(connection, sender, reader, lambda: reader.feed(chunk))

    def _found(self, connection: int, sender: str, reader: StreamReader, read: Callable[[], list[Any]]) -> None:
        try:
            items = read()
        except Exception as exc:  # a reader's fault stops judging that stream, never the forwarding
            self.stats.reader_faults.append(f"connection {connection} {sender}: {exc!r}")
            reader.feed = lambda data: []  # type: ignore[method-assign]
            return
        for item in items:
            self._offer(connection, sender, item, int(getattr(item, "size", 0) or len(getattr(item, "body", b""))))
