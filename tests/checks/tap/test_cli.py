"""`rlconform tap`: it prints where to connect, stops after --max-messages or on SIGTERM, prints the per-clause
summary and exits 0 for a conforming pair, 1 for a broken client, 2 on a usage error; RLCONFORM_ALLOWED_NETWORKS
admits the sources."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake

from app.cli.common import UsageError
from app.cli.tap import event_loop_factory
from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from tests.zoo.plugrl_client import transport

REPO_ROOT = Path(__file__).resolve().parents[3]
DEADLINE = 30.0


async def start_tap(
    upstream: str, *args: str, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, str]:
    process, url, _ = await start_tap_saying(upstream, *args, env=env)
    return process, url


async def start_tap_saying(
    upstream: str, *args: str, env: dict[str, str] | None = None
) -> tuple[asyncio.subprocess.Process, str, str]:
    """The tap's process, the URL to connect to, and the line that said it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "tap",
        "plugrl",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        upstream,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), **(env or {})},
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), DEADLINE)).decode()
    assert line.startswith("tap: listening on 127.0.0.1:"), line
    port = line.split("127.0.0.1:", 1)[1].split(",", 1)[0]
    return process, f"ws://127.0.0.1:{port}", line


async def finish(process: asyncio.subprocess.Process) -> tuple[int, str]:
    try:
        out, _ = await asyncio.wait_for(process.communicate(), DEADLINE)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return process.returncode, out.decode()


@pytest.mark.parametrize(("client", "code"), [(ReferenceClient, 0), (transport.JsonText, 1)])
async def test_the_tap_stops_after_max_messages_and_exits_by_its_verdicts(client, code):
    server = await start_reference_server("127.0.0.1", 0, stop_after=12)
    try:
        process, url = await start_tap(f"ws://127.0.0.1:{server.port}", "--max-messages", "6", "--quiet")
        try:
            await asyncio.wait_for(client(url).session(), 10)
        except Exception:
            pass
        returncode, out = await finish(process)
    finally:
        await server.close()
    assert returncode == code, out
    assert "plugrl-client.2.binary-frames" in out
    if code:
        assert "fail  MUST   plugrl-client.2.binary-frames" in out and "first at" in out


async def test_sigterm_stops_the_tap_with_its_summary():
    server = await start_reference_server("127.0.0.1", 0)
    try:
        process, _ = await start_tap(f"ws://127.0.0.1:{server.port}")
        process.send_signal(signal.SIGTERM)
        returncode, out = await finish(process)
    finally:
        await server.close()
    assert returncode == 0, out
    assert "needs an active run" in out and "0 messages" in out


async def test_a_source_outside_the_allowed_networks_is_refused():
    server = await start_reference_server("127.0.0.1", 0)
    try:
        process, url = await start_tap(
            f"ws://127.0.0.1:{server.port}", "--duration", "1.5", env={"RLCONFORM_ALLOWED_NETWORKS": "10.0.0.0/8"}
        )
        with pytest.raises((OSError, InvalidHandshake)):  # the tap aborts the connection at once
            async with connect(url, open_timeout=5):
                pass
        returncode, out = await finish(process)
    finally:
        await server.close()
    assert returncode == 0 and "0 connections" in out


@pytest.mark.parametrize("choice", ["asyncio", "uvloop"])
async def test_the_relay_runs_on_the_event_loop_asked_for(choice):
    pytest.importorskip("uvloop")
    server = await start_reference_server("127.0.0.1", 0, stop_after=12)
    try:
        upstream = f"ws://127.0.0.1:{server.port}"
        process, url, line = await start_tap_saying(upstream, "--max-messages", "6", "--loop", choice)
        await asyncio.wait_for(ReferenceClient(url).session(), 10)
        returncode, out = await finish(process)
    finally:
        await server.close()
    assert line.rstrip().endswith(f"(event loop: {choice})"), line
    assert returncode == 0, out
    assert "pass  MUST   plugrl-client.2.binary-frames" in out


def test_auto_takes_uvloop_when_installed_and_asyncio_when_not(monkeypatch):
    uvloop = pytest.importorskip("uvloop")
    assert event_loop_factory("auto") is uvloop.new_event_loop
    assert event_loop_factory("asyncio") is None
    monkeypatch.setitem(sys.modules, "uvloop", None)  # as if not installed: importing it raises ImportError
    assert event_loop_factory("auto") is None
    with pytest.raises(UsageError, match="uvloop is not installed"):
        event_loop_factory("uvloop")


async def test_a_kind_without_a_tap_is_a_usage_error():
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "tap",
        "rlmesh",
        "--listen",
        "127.0.0.1:0",
        "--upstream",
        "ws://x:1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )
    _, err = await asyncio.wait_for(process.communicate(), DEADLINE)
    assert process.returncode == 2 and "no tap" in err.decode()
