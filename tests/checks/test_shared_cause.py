"""Fail fast on a shared cause: against a target that accepts and never answers, every kind's run
takes about two step deadlines (the first phase, one short confirming attempt) plus set-up, and the
later phases that need the first exchange are `error` "not exercised: the same cause as phase X".

Server kinds face a TCP server that accepts, reads and never writes; client kinds face a client
that connects and never sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake

from checks.core import Report, Verdict, run_suite
from checks.registry import find_suite, kind_names

TIMEOUT = 1.0
BOUND = 3 * TIMEOUT + 5.0
SAME_CAUSE = "not exercised: the same cause as phase "
UNREACHABLE = "not run: "  # the older fold: the whole run stops where the target cannot be reached

SERVER_KINDS = [kind for kind in kind_names() if not kind.endswith("-client")]
CLIENT_KINDS = [kind for kind in kind_names() if kind.endswith("-client")]


@contextlib.asynccontextmanager
async def silent_server() -> AsyncIterator[int]:
    """Accepts every connection on 127.0.0.1, reads what comes, never writes."""
    held: list[asyncio.StreamWriter] = []

    async def swallow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):  # cancelled: the test is over
            while await reader.read(65536):
                pass

    server = await asyncio.start_server(swallow, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in held:
            writer.close()
        await server.wait_closed()


@contextlib.asynccontextmanager
async def silent_websocket_server() -> AsyncIterator[int]:
    """Completes every WebSocket handshake on 127.0.0.1, then never sends a frame (it reads what comes)."""
    from websockets.asyncio.server import ServerConnection, serve
    from websockets.exceptions import ConnectionClosed

    async def swallow(connection: ServerConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for _ in connection:
                pass

    async with serve(swallow, "127.0.0.1", 0, ping_interval=None) as server:
        yield next(iter(server.sockets)).getsockname()[1]


# Where a kind's first exchange is WebSocket frames after an HTTP upgrade, silence starts after the handshake.
SILENT_AFTER_HANDSHAKE = {"plugrl-server", "plugrl-client"}


def silent_target(kind: str) -> contextlib.AbstractAsyncContextManager[int]:
    return silent_websocket_server() if kind in SILENT_AFTER_HANDSHAKE else silent_server()


def target_url(kind: str, port: int) -> str:
    suite = find_suite(kind)
    assert suite is not None, f"{kind} does not load"
    if not suite.url_schemes:
        return f"127.0.0.1:{port}"
    scheme = suite.url_schemes[0]
    path = "/v1" if kind == "openai-chat" else ""
    return f"{scheme}://127.0.0.1:{port}{path}"


def folded(report: Report) -> list[str]:
    """The clauses recorded as not run for the cause an earlier phase met (a shared cause, or unreachable)."""
    return [
        r.clause_id
        for r in report.results.values()
        if r.verdict is Verdict.ERROR and (SAME_CAUSE in r.actual or r.actual.startswith(UNREACHABLE))
    ]


@pytest.mark.parametrize("kind", SERVER_KINDS)
async def test_a_silent_server_costs_about_two_deadlines(kind: str) -> None:
    suite = find_suite(kind)
    assert suite is not None
    async with silent_target(kind) as port:
        started = time.monotonic()
        report = await run_suite(suite, target_url(kind, port), {"timeout": TIMEOUT})
        elapsed = time.monotonic() - started
    assert elapsed < BOUND, f"{kind}: {elapsed:.1f}s against a silent server (bound {BOUND:.0f}s)"
    assert folded(report), f"{kind}: no phase was folded into the first one's cause"
    if kind in SILENT_AFTER_HANDSHAKE:  # reachable, so the engine's shared cause (not unreachability) folds them
        assert any(SAME_CAUSE in r.actual for r in report.results.values())


@pytest.mark.parametrize("kind", CLIENT_KINDS)
async def test_a_silent_client_costs_about_two_deadlines(kind: str) -> None:
    suite = find_suite(kind)
    assert suite is not None
    announced: asyncio.Queue[str] = asyncio.Queue()

    class Announcements:
        def __getattr__(self, name: str) -> object:
            return lambda *args, **kwargs: None

        def announce(self, url: str, message: str) -> None:
            announced.put_nowait(url)

    run = asyncio.ensure_future(run_suite(suite, "", {"timeout": TIMEOUT}, sink=Announcements()))  # type: ignore[arg-type]
    started = time.monotonic()
    url = await asyncio.wait_for(announced.get(), 10)
    host, _, port = url.rstrip("/").rpartition("/")[2].rpartition(":")
    silent: list[Any] = []
    try:
        while not run.done():  # connect whenever the run listens again, and never send a frame
            with contextlib.suppress(OSError, TimeoutError, InvalidHandshake):
                if kind in SILENT_AFTER_HANDSHAKE:
                    silent.append(await connect(url, open_timeout=TIMEOUT, ping_interval=None))
                else:
                    silent.append((await asyncio.open_connection(host.strip("[]"), int(port)))[1])
            await asyncio.wait([run], timeout=0.5)
        report = await run
    finally:
        for connection in silent:
            with contextlib.suppress(Exception):  # the run may have closed it first
                result = connection.close()
                if asyncio.iscoroutine(result):
                    await result
        run.cancel()
    elapsed = time.monotonic() - started
    assert elapsed < BOUND, f"{kind}: {elapsed:.1f}s against a silent client (bound {BOUND:.0f}s)"
    if len(suite.select()) > 2:
        assert folded(report), f"{kind}: no phase was folded into the first one's cause"
    else:  # the first phase and its confirming attempt are the whole run: both end without a pass
        assert {r.verdict for r in report.results.values()} <= {Verdict.FAIL, Verdict.ERROR, Verdict.INFO}
