"""Each `rlconform` command imports only what it uses: the web stack loads for `serve` and `worker` alone.

Every command runs in a fresh interpreter that reports, after the command, which of the
heavy packages ended up in `sys.modules`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
WEB_STACK = ("fastapi", "sqlalchemy", "sqlmodel", "alembic", "procrastinate", "uvicorn", "starlette")
SUITE_STACK = ("numpy", "websockets", "grpc", "httpx")

# Runs `rlconform ARGS...` as `python -m app.cli` does, then prints the top-level packages loaded.
PROBE = """
import json, sys
from app.cli import main
try:
    main(sys.argv[1:])
finally:
    print(json.dumps(sorted({name.partition('.')[0] for name in sys.modules})), file=sys.stderr)
"""


def loaded_after(*arguments: str) -> set[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *arguments],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def closed_port() -> int:
    """A port nothing listens on (taken from the OS, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_help_loads_no_suite_and_no_web_stack() -> None:
    loaded = loaded_after("--help")
    assert not loaded & {*WEB_STACK, *SUITE_STACK, "pydantic"}, loaded & {*WEB_STACK, *SUITE_STACK, "pydantic"}


@pytest.mark.parametrize("arguments", [("suites",), ("suites", "--json"), ("suites", "plugrl")])
def test_suites_loads_no_web_stack(arguments: tuple[str, ...]) -> None:
    loaded = loaded_after(*arguments)
    assert "checks" in loaded  # the probe saw the command run
    assert not loaded & set(WEB_STACK), loaded & set(WEB_STACK)


def test_check_loads_its_kind_and_no_web_stack() -> None:
    url = f"ws://127.0.0.1:{closed_port()}"
    loaded = loaded_after("check", "plugrl-server", url, "--timeout", "0.5", "--quiet")
    assert "websockets" in loaded  # the check ran its suite
    assert not loaded & set(WEB_STACK), loaded & set(WEB_STACK)
    assert "grpc" not in loaded  # another kind's transport


def test_one_kind_listing_loads_only_that_kind() -> None:
    loaded = loaded_after("suites", "plugrl-server")
    assert "grpc" not in loaded and "httpx" not in loaded, loaded & {"grpc", "httpx"}


def test_ci_loads_an_http_client_and_no_web_stack() -> None:
    loaded = loaded_after("ci", "--server", f"http://127.0.0.1:{closed_port()}", "--target", "t", "--wait-timeout", "1")
    assert "httpx" in loaded
    assert not loaded & {*WEB_STACK, "numpy", "grpc", "websockets"}, loaded & {*WEB_STACK, "numpy", "grpc"}
