"""Fixtures for running the plugrl-server suite against live servers on free ports.

Every server a test starts binds 127.0.0.1 port 0 (the OS picks a free port)
and is closed at teardown, whatever the test did.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from checks.core import Report, run_suite
from checks.plugrl import conforming
from checks.plugrl.reference import ReferenceServer, start_reference_server
from checks.plugrl.suite import SUITE

# Short deadlines keep the tests fast; servers that behave answer in milliseconds (the conforming runs' own).
QUICK_OPTIONS: dict[str, Any] = dict(conforming.QUICK_OPTIONS)

RunCheck = Callable[..., Awaitable[Report]]


def free_port() -> int:
    """A port nothing listens on right now (for subprocess servers and refused-connection tests)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def run_check() -> RunCheck:
    """`await run_check(url, phases=None, include_optional=False, **options)` -> Report."""

    async def run(url: str, phases: list[str] | None = None, include_optional: bool = False, **options: Any) -> Report:
        return await run_suite(SUITE, url, {**QUICK_OPTIONS, **options}, phases, include_optional=include_optional)

    return run


@pytest.fixture
async def reference_factory() -> AsyncIterator[Callable[..., Awaitable[ReferenceServer]]]:
    """`await reference_factory(**kwargs)` starts a reference server; all are closed at teardown."""
    started: list[ReferenceServer] = []

    async def start(**kwargs: Any) -> ReferenceServer:
        server = await start_reference_server("127.0.0.1", 0, **kwargs)
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            await server.close()


@pytest.fixture
async def reference(reference_factory) -> ReferenceServer:
    return await reference_factory()


@pytest.fixture
async def ws_server_factory() -> AsyncIterator[Callable[..., Awaitable[str]]]:
    """`await ws_server_factory(handler, **serve_kwargs)` serves a WebSocket handler; returns its ws:// URL."""
    servers: list[Server] = []

    async def start(handler: Callable[[ServerConnection], Awaitable[None]], **kwargs: Any) -> str:
        kwargs.setdefault("compression", None)
        kwargs.setdefault("max_size", None)
        server = await serve(handler, "127.0.0.1", 0, **kwargs)
        servers.append(server)
        host, port = next(iter(server.sockets)).getsockname()[:2]
        return f"ws://{host}:{port}"

    try:
        yield start
    finally:
        for server in servers:
            server.close()
            await server.wait_closed()


@pytest.fixture
async def tcp_server_factory() -> AsyncIterator[Callable[..., Awaitable[str]]]:
    """`await tcp_server_factory(callback)` serves raw TCP (asyncio streams); returns a ws:// URL to it."""
    servers: list[asyncio.Server] = []
    handlers: set[asyncio.Task] = set()

    async def start(callback: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]) -> str:
        async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            handlers.add(asyncio.current_task())
            try:
                await callback(reader, writer)
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(tracked, "127.0.0.1", 0)
        servers.append(server)
        host, port = server.sockets[0].getsockname()[:2]
        return f"ws://{host}:{port}"

    try:
        yield start
    finally:
        for server in servers:
            server.close()
        for task in list(handlers):
            task.cancel()
        for server in servers:
            await server.wait_closed()
