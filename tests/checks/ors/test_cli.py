"""`rlconform check ors URL` exits 0 on `rlconform reference-server ors` and 1 on a zoo entry, naming its clause."""

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.checks.ors.peers import free_port
from tests.checks.session.test_cli import served
from tests.zoo.ors.servers import BrokenOrsServer

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def check(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "app.cli", "check", "ors", url, "--timeout", "5", *args]
    return subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)


def test_the_reference_server_command_passes_the_check():
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "reference-server", "ors", "--port", str(port)],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                assert server.poll() is None and time.monotonic() < deadline, "the reference server did not start"
                time.sleep(0.1)
        done = check(url, "--option", "raising_tool=fail")
    finally:
        server.terminate()
        server.wait(10)
    assert done.returncode == 0, done.stdout[-2000:]
    assert "outcome: pass" in done.stdout


def test_a_broken_server_exits_1_naming_its_clause():
    with served(BrokenOrsServer("string-reward")) as url:
        done = check(url)
    assert done.returncode == 1, done.stdout[-2000:]
    failing = [line for line in done.stdout.splitlines() if line.lstrip().startswith("FAIL")]
    assert any("ors.call.reward-number" in line for line in failing), done.stdout[-2000:]
