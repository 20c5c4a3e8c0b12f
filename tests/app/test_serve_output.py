"""`rlconform serve` says where the dashboard is, and keeps per-request lines out unless --log-level debug."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.app.helpers import free_socket

ROOT = Path(__file__).resolve().parents[2]


def serve_and_browse(
    tmp_path: Path, *flags: str, during: Callable[[str], None] | None = None, stop: int = signal.SIGINT
) -> tuple[str, int]:
    """Start serve, wait for its dashboard line, load a few pages (then `during(base_url)`), stop it with
    `stop`: everything it wrote, and its port."""
    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RLCONFORM_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--no-demo", *flags],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    try:
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 30
        while not any("rlconform dashboard at" in line for line in lines):
            assert time.monotonic() < deadline and selector.select(1) is not None, lines
            line = process.stdout.readline()
            assert line, f"serve exited: {lines}"
            lines.append(line)
        for path in ("/", "/runs", "/api/v1/targets", "/healthz"):
            httpx.get(f"http://127.0.0.1:{port}{path}", timeout=10)
        if during is not None:
            during(f"http://127.0.0.1:{port}")
    finally:
        process.send_signal(stop)
        rest, _ = process.communicate(timeout=20)
    return "".join(lines) + rest, port


def test_serve_prints_the_dashboard_address_and_no_request_lines(tmp_path: Path) -> None:
    output, port = serve_and_browse(tmp_path)
    assert f"rlconform dashboard at http://127.0.0.1:{port}" in output
    assert "GET /runs" not in output and "HTTP Request" not in output


def test_log_level_debug_shows_the_requests(tmp_path: Path) -> None:
    output, port = serve_and_browse(tmp_path, "--log-level", "debug")
    assert f"rlconform dashboard at http://127.0.0.1:{port}" in output
    assert "GET /runs" in output


def test_a_service_stopped_while_it_hosts_a_tap_ends_the_run_and_leaves_nothing_behind(
    tmp_path: Path, reference_server: Callable[..., str]
) -> None:
    from tests.app.helpers import tap_listen_url, wait_until

    upstream = reference_server()
    seen: dict[str, Any] = {}

    def tap_then_stop(base: str) -> None:
        with httpx.Client(base_url=base, timeout=10) as client:
            body = {"name": "watched", "kind": "plugrl", "upstream": upstream, "tap": {}}
            assert client.post("/api/v1/taps", json=body).status_code == 201
            run_id = int(client.post("/api/v1/targets/watched/runs", json={}).json()["id"])
            tap_listen_url(client, run_id)
            wait_until(lambda: bool(_spawned_judges()), timeout=15, what="the tap's judging process")
            seen["run"] = run_id

    output, _ = serve_and_browse(tmp_path, during=tap_then_stop, stop=signal.SIGTERM)
    assert "leaked" not in output and "Traceback" not in output, output
    import sqlite3

    with sqlite3.connect(tmp_path / "s.db") as database:
        status, message = database.execute("SELECT status, message FROM run WHERE id = ?", (seen["run"],)).fetchone()
    assert (status, message.split(";")[0]) == ("finished", "tap stopped"), message


def _spawned_judges() -> list[int]:
    """Pids of spawned processes (a hosted tap's judges) below this test's process, read from /proc."""
    parents: dict[int, int] = {}
    spawned: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if b"multiprocessing.spawn" in (entry / "cmdline").read_bytes():
                spawned.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue

    def below_us(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [pid for pid in spawned if below_us(pid)]
