"""The tap's relay: TCP both ways, byte for byte, with a copy of each message offered to the judges.

Each connection is two pumps. A pump writes what it read to the other side first, then lets
the kind's reader find messages in a copy and offers them to the queue, then waits for the
other side to drain, so a slow reader slows its sender (back-pressure passes through) and
the tap holds at most one read per direction. An end of stream is passed on as a half close
and a reset as an abort, so each side sees the other close as it did; a WebSocket close frame
is bytes like any other and reaches the other side unchanged, code and reason. Judging runs
in a process of its own (`judging_process`), or a thread, and never holds a pump.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from checks.tap.copies import Copy, Offer

READ_SIZE = 1024 * 1024


class StreamReader(Protocol):
    """A kind's reader of one direction: messages found in the bytes so far; `end` at end of stream."""

    def feed(self, data: bytes) -> list[Any]: ...


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
        self._ids = itertools.count(1)
        self._gaps: set[int] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen on host:port (0: a free port); the port bound."""
        self._server = await asyncio.start_server(self._accepted, host, port, limit=READ_SIZE)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def _offer(self, connection: int, sender: str, item: Any, size: int) -> None:
        self.stats.messages += 1
        copy = Copy(connection, sender, item, size, time.monotonic(), connection in self._gaps, self.stats.messages)
        if self.queue.offer(copy):
            self._gaps.discard(connection)
        else:
            self.stats.unjudged += 1
            self._gaps.add(connection)

    async def _accepted(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._connection(client_in, client_out)
        except asyncio.CancelledError:
            pass  # the tap is stopping: its connections end with it
        finally:
            self._tasks.discard(task)

    async def _connection(self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter) -> None:
        source = str((client_out.get_extra_info("peername") or ("?",))[0])
        if not self.admit(source):
            self.stats.refused += 1
            client_out.transport.abort()
            return
        try:
            server_in, server_out = await asyncio.open_connection(*self.upstream, limit=READ_SIZE)
        except OSError:
            client_out.transport.abort()  # the upstream refused: the client sees a refusal too
            return
        for writer in (client_out, server_out):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        connection = next(self._ids)
        self.stats.connections += 1
        self._offer(connection, "tap", Opened(source), 0)
        client_reader, server_reader = self.readers()
        up = self._pump(client_in, server_out, connection, "client", client_reader)
        down = self._pump(server_in, client_out, connection, "server", server_reader)
        try:
            await asyncio.gather(up, down)
        finally:
            for writer in (client_out, server_out):
                writer.close()

    async def _pump(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        connection: int,
        sender: str,
        reader: StreamReader,
    ) -> None:
        how = "closed"
        try:
            while chunk := await source.read(READ_SIZE):
                sink.write(chunk)
                self._copy(connection, sender, reader, chunk)
                await sink.drain()
        except (ConnectionError, OSError):
            how = "reset"
        if how == "reset" or sink.transport.is_closing():
            sink.transport.abort()
        else:
            try:
                sink.write_eof()
            except (OSError, RuntimeError):
                sink.transport.abort()
        end = getattr(reader, "end", None)
        if callable(end):
            self._found(connection, sender, reader, end)
        self._offer(connection, sender, Ended(how, sender), 0)

    def _copy(self, connection: int, sender: str, reader: StreamReader, chunk: bytes) -> None:
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
