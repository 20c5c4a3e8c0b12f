"""Listen-mode runs: rlconform plays the server and grades the client that connects.

A run binds one port (the `listen` option, else the service's host and port
range), announces the URL, and queues every connection a permitted source
opens. Phases take connections off the queue in arrival order and drive them;
a connection stays open until its phase closes it, so a phase owns it whole.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Generic, TypeVar

import pydantic
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from checks.core import ListenPolicy, NoReply, PhaseContext, SuiteOptions

DEFAULT_CONNECT_DEADLINE = 120.0


class ListenOptions(SuiteOptions):
    """Options every listen-mode suite has."""

    listen: str | None = pydantic.Field(
        None,
        pattern=r"^\[?[A-Za-z0-9.:_-]+\]?:\d{1,5}$",
        description="HOST:PORT to listen on (port 0: any free port); by default the service's listen settings.",
    )
    connect_deadline: float = pydantic.Field(
        DEFAULT_CONNECT_DEADLINE,
        gt=0,
        le=3600,
        description="Seconds to wait for the client to connect (and to reconnect when a scenario restarts it).",
    )


def split_host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


ConnectionT = TypeVar("ConnectionT")


@dataclass
class Accepted(Generic[ConnectionT]):
    """One client connection, held open until the phase that took it lets it go."""

    connection: ConnectionT
    peer: str
    released: asyncio.Event = field(default_factory=asyncio.Event)


class Listener(Generic[ConnectionT]):
    """A bound port and the queue of connections that reached it."""

    scheme = "ws"

    def __init__(self, options: ListenOptions) -> None:
        self.options = options
        self.queue: asyncio.Queue[Accepted[ConnectionT]] = asyncio.Queue()
        self.arrived = asyncio.Event()
        self.host = ""
        self.port = 0
        self.refused: list[str] = []
        self.held: list[Accepted[ConnectionT]] = []
        self.served = 0
        # Told the source address (HOST:PORT) of each admitted connection: a run records who it graded.
        self.on_connect: Callable[[str], None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}" if self.scheme else f"{host}:{self.port}"

    async def wait_for_client(self) -> bool:
        """Whether a client connected within the connect deadline (the connection stays queued)."""
        try:
            await asyncio.wait_for(self.arrived.wait(), timeout=self.options.connect_deadline)
        except TimeoutError:
            return False
        return True

    async def accept(self, timeout: float) -> Accepted[ConnectionT]:
        """The next queued connection; NoReply when none arrives within `timeout`."""
        try:
            accepted = await asyncio.wait_for(self.queue.get(), timeout=timeout)
        except TimeoutError:
            raise NoReply(f"no client connected within {timeout:g}s", timeout) from None
        self.served += 1
        return accepted

    def pending(self) -> int:
        return self.queue.qsize()

    async def _hold(self, connection: ConnectionT, peer: str, closed: Awaitable[Any], address: str = "") -> None:
        if self.on_connect is not None:
            self.on_connect(address or peer)
        accepted = Accepted(connection, peer)
        self.held.append(accepted)
        await self.queue.put(accepted)
        self.arrived.set()
        released = asyncio.ensure_future(accepted.released.wait())
        done = asyncio.ensure_future(closed)
        try:
            await asyncio.wait({released, done}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            released.cancel()
            done.cancel()

    async def _bind_any(self, policy: ListenPolicy, bind: Callable[[str, int], Awaitable[int]]) -> None:
        host, ports = policy.host, policy.ports
        if self.options.listen:
            host, port = split_host_port(self.options.listen)
            ports = (port,)
        last: OSError | None = None
        for port in ports:
            try:
                self.port = await bind(host, port)
            except OSError as exc:
                last = exc
                continue
            self.host = host
            return
        raise OSError(f"cannot listen on {host} at any of {len(ports)} ports: {last}")

    async def close(self) -> None:
        for accepted in self.held:
            accepted.released.set()
        await self._stop()

    async def _stop(self) -> None:
        server: Server | asyncio.Server | None = getattr(self, "server", None)
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), timeout=3.0)


class WebSocketListener(Listener[ServerConnection]):
    """A WebSocket endpoint with compression off and no frame cap (the PlugRL server's settings)."""

    def __init__(self, options: ListenOptions) -> None:
        super().__init__(options)
        self.server: Server | None = None

    @classmethod
    async def start(cls, options: ListenOptions, policy: ListenPolicy) -> WebSocketListener:
        listener = cls(options)

        def admit(connection: ServerConnection, request: Request) -> Response | None:
            peer = str(connection.remote_address[0]) if connection.remote_address else ""
            if policy.allow is not None and not policy.allow(peer):
                listener.refused.append(peer)
                return connection.respond(HTTPStatus.FORBIDDEN, "source address not allowed\n")
            return None

        async def handler(connection: ServerConnection) -> None:
            remote = connection.remote_address
            await listener._hold(connection, str(remote[0]) if remote else "", connection.wait_closed(), _shown(remote))

        async def bind(host: str, port: int) -> int:
            listener.server = await serve(
                handler, host, port, compression=None, max_size=None, process_request=admit, ping_interval=None
            )
            bound: int = listener.server.sockets[0].getsockname()[1]
            return bound

        await listener._bind_any(policy, bind)
        return listener


def _shown(remote: Any) -> str:
    """A socket's source address as HOST:PORT ([HOST]:PORT for IPv6)."""
    if not remote:
        return ""
    host = str(remote[0])
    return f"[{host}]:{remote[1]}" if ":" in host else f"{host}:{remote[1]}"


@dataclass
class Stream:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter


class TcpListener(Listener[Stream]):
    """A plain TCP endpoint (RLlink's transport)."""

    scheme = "tcp"

    def __init__(self, options: ListenOptions) -> None:
        super().__init__(options)
        self.server: asyncio.Server | None = None
        self.handler: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]] | None = None

    async def stop_listening(self) -> None:
        """Close the listening socket: connects are refused until `listen_again` (RLlib's recycle)."""
        await self._stop()

    async def listen_again(self) -> None:
        assert self.handler is not None
        self.server = await asyncio.start_server(self.handler, self.host, self.port, reuse_address=True)

    @classmethod
    async def start(cls, options: ListenOptions, policy: ListenPolicy) -> TcpListener:
        listener = cls(options)

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            peername = writer.get_extra_info("peername")
            peer = str(peername[0]) if peername else ""
            if policy.allow is not None and not policy.allow(peer):
                listener.refused.append(peer)
                writer.close()
                return
            closed = asyncio.get_running_loop().create_future()
            await listener._hold(Stream(reader, writer), peer, closed, _shown(peername))
            writer.close()

        listener.handler = handler

        async def bind(host: str, port: int) -> int:
            listener.server = await asyncio.start_server(handler, host, port, reuse_address=True)
            bound: int = listener.server.sockets[0].getsockname()[1]
            return bound

        await listener._bind_any(policy, bind)
        return listener


async def accept_client(ctx: PhaseContext[Any, Any], scenario: str) -> Accepted[Any]:
    """The client for this phase: the one already waiting, else ask for a (re)started client and wait."""
    listener = ctx.listener
    if listener.served and not listener.pending():
        ctx.report.announce(listener.url, f"start the client again (scenario {scenario}) at {listener.url}")
    accepted: Accepted[Any] = await listener.accept(ctx.options.connect_deadline)
    return accepted
