"""A third-party server run as a subprocess for a real-peer test: started, waited for until its health
route answers 200, and stopped (terminated, then killed) whatever the test did."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

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
