"""The real peer: RLlib 2.60's external-inference env runner, graded through the CLI.

Each test starts its own RLlib process (`rllib_driver.py`, run by the RLlib
venv's python: RLCONFORM_RLLIB_PYTHON, else `~/.cache/rlconform-peers/rllib/bin/python`) in a
new session on a free port, and at teardown kills every process of that
session by pid: Ray's gcs_server, raylet and workers start their own process
groups but stay in the driver's session. The tests skip when the venv is
missing (`scripts/test` creates it).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realpeers.verdicts import faults_of_json, rllib_differences

REPO_ROOT = Path(__file__).resolve().parents[3]
DRIVER = Path(__file__).with_name("rllib_driver.py")
START_TIMEOUT = 180.0
CHECK_TIMEOUT = 600.0


def rllib_python() -> Path | None:
    configured = os.environ.get("RLCONFORM_RLLIB_PYTHON")
    python = Path(configured) if configured else Path.home() / ".cache" / "rlconform-peers" / "rllib" / "bin" / "python"
    return python if python.is_file() and os.access(python, os.X_OK) else None


PYTHON = rllib_python()
pytestmark = pytest.mark.skipif(
    PYTHON is None, reason="no RLlib venv: scripts/test builds ~/.cache/rlconform-peers/rllib (RLCONFORM_RLLIB_PYTHON)"
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def session_pids(session: int) -> list[int]:
    """Every live process whose session id is `session` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


def kill_session(session: int) -> list[int]:
    """TERM, then KILL, every process of the session; the pids still alive after that (should be none)."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        for pid in session_pids(session):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        end = time.monotonic() + grace
        while session_pids(session) and time.monotonic() < end:
            time.sleep(0.1)
    return session_pids(session)


@pytest.fixture
def rllib_server() -> Iterator[str]:
    """A fresh RLlib PPO process listening on a free port; its URL."""
    assert PYTHON is not None
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="rlr", dir="/tmp") as ray_dir:
        log = Path(ray_dir) / "driver.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [str(PYTHON), str(DRIVER), "--port", str(port), "--ray-dir", ray_dir],
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            started = time.monotonic()
            while "READY" not in log.read_text():
                if process.poll() is not None or time.monotonic() - started > START_TIMEOUT:
                    pytest.fail(f"RLlib did not start (exit {process.poll()}):\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
            print(f"RLlib up in {time.monotonic() - started:.1f}s on port {port}")
            yield f"tcp://127.0.0.1:{port}"
        finally:
            left = kill_session(process.pid)
            process.wait(10)
            assert not left, f"Ray processes survived the teardown: {left}"


def check(url: str, *args: str) -> tuple[int, str, dict[str, str], float]:
    """Exit code, text output, every fail/warn/error of the run (read from --json) and the seconds taken."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="rlj", dir="/tmp") as out_dir:
        written = Path(out_dir) / "report.json"
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", "check", "rllink", url, "--json", str(written), *args],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=CHECK_TIMEOUT,
            check=False,
        )
        faults = (
            faults_of_json(json.loads(written.read_text())) if written.is_file() else {"no --json written": "error"}
        )
    return done.returncode, done.stdout + done.stderr, faults, time.monotonic() - started


def test_default_phases_pass_on_rllib(rllib_server: str):
    code, output, faults, seconds = check(rllib_server)
    print(f"default phases: exit {code} in {seconds:.1f}s")
    assert rllib_differences(faults, "default phases") == {}, output
    assert code == 0, output
    assert any(line.strip().startswith("ok") and "rllink.liveness.on-policy" in line for line in output.splitlines())


def test_destructive_phase_on_a_fresh_rllib_only_warns(rllib_server: str):
    code, output, faults, seconds = check(rllib_server, "--phase", "handshake", "--phase", "destructive")
    print(f"handshake + destructive: exit {code} in {seconds:.1f}s")
    assert rllib_differences(faults, "handshake + destructive") == {}, output
    assert code == 0, output
