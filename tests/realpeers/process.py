"""A third-party server run as a subprocess for a real-peer test: started, waited for until its health
route answers 200, and stopped (terminated, then killed) whatever the test did."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.app.helpers import free_port
from tests.processes import stop


@contextmanager
def peer_process(
    command: list[str],
    env: dict[str, str],
    log_path: Path,
    health_url: str,
    *,
    what: str,
    start_deadline: float,
    poll: float = 0.5,
    stop_wait: float = 15.0,
    log_tail: int = 2000,
) -> Iterator[None]:
    """Run `command` with its output in `log_path` until the block ends; enter once `health_url` answers 200.

    The start fails (with the log's last `log_tail` characters) when the process exits first, and fails
    naming `what` after `start_deadline` seconds."""
    log = log_path.open("w")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_deadline
        while True:
            assert process.poll() is None, log_path.read_text()[-log_tail:]
            assert time.monotonic() < deadline, f"{what} did not answer {httpx.URL(health_url).path} in time"
            try:
                if httpx.get(health_url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(poll)
        yield
    finally:
        stop(process, wait=stop_wait)
        log.close()


@contextmanager
def openai_peer(
    command: list[str], env: dict[str, str], log_path: Path, health_path: str, *, what: str, start_deadline: float
) -> Iterator[str]:
    """An OpenAI-compatible server run by `peer_process`: `command` with `--port` a free port (it binds
    127.0.0.1), entered once `health_path` answers; yields its base URL, ending in /v1."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with peer_process(
        [*command, "--port", str(port)], env, log_path, f"{url}{health_path}", what=what, start_deadline=start_deadline
    ):
        yield f"{url}/v1"
