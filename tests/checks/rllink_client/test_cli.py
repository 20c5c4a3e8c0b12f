"""`rlconform check rllink-client --listen` prints its tcp:// URL first; the reference client passes; no client is 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
QUICK = ["--option", "recycle=0.4", "--option", "reply_delay=0.1", "--option", "fragment_length=20", "--timeout", "3"]


def rlconform(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def test_listen_prints_url_first_and_reference_client_passes() -> None:
    check = rlconform("check", "rllink-client", "--listen", "127.0.0.1:0", "--option", "connect_deadline=20", *QUICK)
    client = None
    try:
        assert check.stdout is not None
        first = check.stdout.readline()
        assert first.startswith("waiting for a client at tcp://127.0.0.1:")
        url = first.split()[-1]
        client = rlconform("reference-client", "rllink", url, "--dialect", "msgpack", "--retry-for", "1")
        assert check.wait(timeout=60) == 0, check.stdout.read()
        assert client.wait(timeout=30) == 0
    finally:
        for process in (check, client):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def test_no_client_exits_2() -> None:
    check = rlconform("check", "rllink-client", "--listen", "127.0.0.1:0", "--option", "connect_deadline=0.5")
    try:
        output, _ = check.communicate(timeout=30)
    finally:
        if check.poll() is None:
            check.kill()
            check.wait()
    assert check.returncode == 2
    assert "no client connected" in output
