"""Serve an ASGI app in-process on a free port: for reference servers that run beside the checker."""

from __future__ import annotations

import asyncio
import socket
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import uvicorn


class AsgiServer:
    """A uvicorn server on a socket of its own, started and stopped on the running event loop."""

    def __init__(self, app: Any, sock: socket.socket, scheme: str = "http", path: str = "") -> None:
        self._sock = sock
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._task: asyncio.Task[None] | None = None
        self.host, self.port = sock.getsockname()[:2]
        self.url = f"{scheme}://{self.host}:{self.port}{path}"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._sock]))
        while not self._server.started:
            if self._task.done():
                await self._task  # raises what stopped it
                raise RuntimeError("the server stopped before it started")
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            await self._task
        self._sock.close()


def listening_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A bound, listening TCP socket to hand to uvicorn (`port=0` takes a free port from the OS)."""
    # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and without it
    # uvicorn's separate header and body writes meet the client's delayed ACK, about 40 ms per request.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def serve_asgi(app: Any, host: str = "127.0.0.1", port: int = 0, *, path: str = "") -> AsgiServer:
    """Start `app` on `host:port` (0 takes a free port from the OS) and return once it accepts connections."""
    server = AsgiServer(app, listening_socket(host, port), path=path)
    await server.start()
    return server


ServerT = TypeVar("ServerT")


@dataclass
class ServedApp(Generic[ServerT]):
    """A reference server object whose app `serve_asgi` serves in this event loop; `close()` stops it."""

    server: ServerT
    asgi: AsgiServer

    @property
    def url(self) -> str:
        return self.asgi.url

    @property
    def host(self) -> str:
        return str(self.asgi.host)

    @property
    def port(self) -> int:
        return int(self.asgi.port)

    async def close(self) -> None:
        await self.asgi.close()
