"""Stopping a subprocess a test started: asked first, killed if it does not stop."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], wait: float = 10.0, after_kill: float | None = 10.0) -> None:
    """Terminate `process` and give it `wait` seconds; then kill it and wait `after_kill` seconds (None: until
    it is gone)."""
    process.terminate()
    try:
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=after_kill)
