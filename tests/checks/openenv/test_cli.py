"""`rlconform check openenv URL` through the real CLI: exit 0 for a conforming server, 1 for a broken one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.checks.openenv import envs
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv import flat_envelope

ROOT = Path(__file__).resolve().parents[3]


def run_cli(url: str, options: dict, tmp_path: Path) -> subprocess.CompletedProcess:
    options_file = tmp_path / "options.json"
    options_file.write_text(json.dumps(options))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "check",
            "openenv",
            url,
            "--options-file",
            str(options_file),
            "--quiet",
            "--junit",
            str(tmp_path / "junit.xml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_exits_0_against_a_conforming_server(tmp_path):
    with serve_in_thread(envs.quiz_app()) as url:
        done = run_cli(url, envs.SEED_OPTIONS, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "openenv.determinism.group" in done.stdout
    assert "outcome: pass" in done.stdout
    assert "<testsuites" in (tmp_path / "junit.xml").read_text()


def test_cli_exits_1_against_a_broken_server(tmp_path):
    with serve_in_thread(flat_envelope.make_app()) as url:
        done = run_cli(url, envs.QUIZ_OPTIONS, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  openenv.ws.envelope" in done.stdout


def test_cli_exits_2_when_nothing_listens(tmp_path):
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    done = run_cli(f"http://127.0.0.1:{port}", {"timeout": 2.0}, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
