"""`rlconform serve` says where the dashboard is, and keeps per-request lines out unless --log-level debug."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.app.helpers import free_socket

ROOT = Path(__file__).resolve().parents[2]


def serve_and_browse(tmp_path: Path, *flags: str) -> tuple[str, int]:
    """Start serve, wait for its dashboard line, load a few pages, stop it: everything it wrote, and its port."""
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
    finally:
        process.send_signal(signal.SIGINT)
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
