"""Raw-socket RLlink zoo servers: no codec at all, just what a socket does.

`MuteListener` accepts and never answers (an RLlib whose listener thread died
before its first message, as with msgpack_numpy missing); `HttpOnPort` is
another service squatting on the port, answering every request with HTTP.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket


class RawServer:
    """Listens on 127.0.0.1 and a free port; `serve` decides what each accepted socket gets."""

    def __init__(self) -> None:
        self.listener = socket.socket()
        self.listener.setblocking(False)
        self.accepted: list[socket.socket] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self._spawn(self._accept())

    def _spawn(self, work: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            connection, _ = await loop.sock_accept(self.listener)
            self.accepted.append(connection)
            self._spawn(self.serve(connection))

    async def serve(self, connection: socket.socket) -> None:
        """Nothing: the bytes sit in the kernel's buffer, unread."""

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        for connection in self.accepted:
            connection.close()
        self.listener.close()
        await asyncio.sleep(0)


class MuteListener(RawServer):
    """Accepts every connection and never reads or answers."""


class HttpOnPort(RawServer):
    """Another service on the port: every request gets an HTTP 400 and a close."""

    async def serve(self, connection: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(OSError):
            await loop.sock_recv(connection, 65536)
            await loop.sock_sendall(connection, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        connection.close()
