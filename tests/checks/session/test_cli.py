"""`python -m app.cli check session-server URL`: 1 naming the broken clause, 0 on the reference, 2 unreachable."""

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.session.backend import Backend
from checks.session.reference import SessionServer, serve_app
from tests.zoo.session_server.catalogue import ZOO

ROOT = Path(__file__).resolve().parents[3]


@contextlib.contextmanager
def served(server: SessionServer) -> Iterator[str]:
    """`server` on a free 127.0.0.1 port, served by an event loop in a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        running = asyncio.run_coroutine_threadsafe(serve_app(server), loop).result(10)
        try:
            yield running.url
        finally:
            asyncio.run_coroutine_threadsafe(running.close(), loop).result(10)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def check(url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "app.cli", "check", "session-server", url, "--option", "timeout=5"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


@pytest.mark.parametrize(
    "name", ["short-session-ids", "records-keep-stream", "deep-rollback-accepted", "float32-samples"]
)
def test_a_broken_server_exits_1_naming_its_clause(name):
    entry = ZOO[name]
    with served(entry.start(entry.tree)) as url:
        result = check(url)
    fail_lines = [line for line in result.stdout.splitlines() if "FAIL" in line]
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(entry.clause in line for line in fail_lines), result.stdout


@pytest.mark.parametrize("tree", ["v1", "v2"])
def test_the_reference_exits_0(tree):
    with served(SessionServer(tree, Backend(delay=0.005))) as url:  # type: ignore[arg-type]
        result = check(url)
    assert result.returncode == 0, result.stdout + result.stderr


def test_an_unreachable_url_exits_2():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = check(f"http://127.0.0.1:{port}")
    assert result.returncode == 2, result.stdout + result.stderr
