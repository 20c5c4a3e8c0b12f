"""Start the real ORS servers in the peer venv (RLCONFORM_ORS_PYTHON) on a free loopback port."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.processes import stop

PEERS = Path(__file__).resolve().parents[2] / "realpeers" / "ors"
PEER_PYTHON = os.environ.get("RLCONFORM_ORS_PYTHON", "")
needs_peers = pytest.mark.skipif(
    not PEER_PYTHON or not Path(PEER_PYTHON).exists(),
    reason="RLCONFORM_ORS_PYTHON is unset (scripts/test builds the openreward + ors-sdk venv and sets it)",
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serving(*args: str, cwd: Path | None = None) -> Iterator[str]:
    """Run `PEER_PYTHON args... PORT` and yield its URL once /health answers; stopped (then killed) at the end."""
    port = free_port()
    env = {**os.environ, "OPENREWARD_DISABLE_UPDATE_CHECK": "1"}
    process = subprocess.Popen(
        [PEER_PYTHON, *args, str(port)], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"the peer exited: {process.stderr.read().decode()[-2000:] if process.stderr else ''}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the peer did not answer /health within 30 s")
            time.sleep(0.1)
        yield url
    finally:
        stop(process, after_kill=None)


def scaffold_template(where: Path) -> Path:
    """`orwd init myenv` in `where`: openreward's template env, as a team starting an env gets it."""
    orwd = Path(PEER_PYTHON).parent / "orwd"
    env = {**os.environ, "OPENREWARD_DISABLE_UPDATE_CHECK": "1"}
    subprocess.run([str(orwd), "init", "myenv"], cwd=where, env=env, check=True, capture_output=True, timeout=60)
    return where / "myenv"
