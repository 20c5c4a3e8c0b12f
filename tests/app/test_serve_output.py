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
import pytest

from tests.app.helpers import free_socket

ROOT = Path(__file__).resolve().parents[2]


def serve_and_browse(
    tmp_path: Path, *flags: str, during: Callable[[str], None] | None = None, stop: int = signal.SIGINT
) -> tuple[str, int, int]:
    """Start serve, wait for its dashboard line, load a few pages (then `during(base_url)`), stop it with
    `stop`: everything it wrote, its port and its exit status."""
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
    return "".join(lines) + rest, port, process.returncode


def test_serve_prints_the_dashboard_address_and_no_request_lines(tmp_path: Path) -> None:
    output, port, _ = serve_and_browse(tmp_path)
    assert f"rlconform dashboard at http://127.0.0.1:{port}" in output
    assert "GET /runs" not in output and "HTTP Request" not in output


def test_log_level_debug_shows_the_requests(tmp_path: Path) -> None:
    output, port, _ = serve_and_browse(tmp_path, "--log-level", "debug")
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

    output, _, _ = serve_and_browse(tmp_path, during=tap_then_stop, stop=signal.SIGTERM)
    assert "leaked" not in output and "Traceback" not in output, output
    import sqlite3

    with sqlite3.connect(tmp_path / "s.db") as database:
        status, message = database.execute("SELECT status, message FROM run WHERE id = ?", (seen["run"],)).fetchone()
    assert (status, message.split(";")[0]) == ("finished", "tap stopped"), message


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_serve_with_exit_0_and_one_line_saying_so(tmp_path: Path, stop: int) -> None:
    """A process manager's SIGTERM (and a person's Ctrl-C) is a clean stop, not a failure (uvicorn re-raised 143)."""
    output, _, code = serve_and_browse(tmp_path, stop=stop)
    assert code == 0, output
    name = signal.Signals(stop).name
    said = [line for line in output.splitlines() if "shut down cleanly" in line]
    assert len(said) == 1 and said[0].endswith(f"rlconform stopped ({name}): shut down cleanly"), output
    assert "Traceback" not in output


def test_serve_on_a_taken_port_says_so_in_one_line_and_starts_nothing(tmp_path: Path) -> None:
    """Bound before anything starts: no dashboard line, no demo targets, one line naming the address."""
    held = free_socket()
    held.listen()
    port = held.getsockname()[1]
    database = tmp_path / "s.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RLCONFORM_DATABASE_URL": f"sqlite:///{database}"}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        held.close()
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert output.strip().splitlines() == [
        f"rlconform: cannot listen on 127.0.0.1:{port}: already in use; stop what holds it or choose another "
        "(--port, RLCONFORM_PORT)"
    ], output
    if database.exists():  # the demo targets are registered as the demo servers start: none were
        import sqlite3

        with sqlite3.connect(database) as connection:
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
            assert "target" not in tables or not connection.execute("SELECT name FROM target").fetchall()


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


def test_starting_a_reference_client_prints_no_grpc_fork_warning(tmp_path: Path) -> None:
    """With the demo's gRPC server running, each "Run the reference client" printed gRPC's fork warning."""
    from tests.app.helpers import wait_until

    sock = free_socket()
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "RLCONFORM_DATABASE_URL": f"sqlite:///{tmp_path / 's.db'}"}
    env.pop("GRPC_ENABLE_FORK_SUPPORT", None)
    command = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(base + "/healthz"), timeout=60, what="serve answering")
        with httpx.Client(base_url=base, timeout=30) as client:
            assert "demo-rlmesh" in {t["name"] for t in client.get("/api/v1/targets").json()}
            body = {"name": "env-client", "kind": "plugrl-client", "options": {"connect_deadline": 30}}
            assert client.post("/api/v1/targets", json=body).status_code == 201
            run_id = client.post("/api/v1/targets/env-client/runs", json={}).json()["id"]
            wait_until(lambda: bool(client.get(f"/api/v1/runs/{run_id}").json()["announcement"]), timeout=30)
            assert client.post(f"/runs/{run_id}/reference-client").status_code == 303
            wait_until(lambda: bool(client.get(f"/api/v1/runs/{run_id}").json()["announcement"]["clients"]), timeout=30)
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "fork" not in output.lower(), output


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False
