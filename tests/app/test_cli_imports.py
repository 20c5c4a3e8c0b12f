"""Each `rlconform` command imports only what it uses: the web stack loads for `serve` and `worker` alone.

Every command runs in a fresh interpreter that reports, after the command, which
modules ended up in `sys.modules`. `suites` reads checks/suites_listing.json and
imports no suite at all while that file is current (`python -m checks.listing --write`);
`check KIND` imports KIND's package and no other kind's.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from checks.registry import RECORDS, kinds_with

REPO_ROOT = Path(__file__).resolve().parents[2]
WEB_STACK = ("fastapi", "sqlalchemy", "sqlmodel", "alembic", "procrastinate", "uvicorn", "starlette")
SUITE_STACK = ("numpy", "websockets", "grpc", "httpx")
# Every kind's own package (the one its suite lives in), by the kinds' full names, as the records say.
KIND_PACKAGES = {name: record.suite.partition(":")[0].rpartition(".")[0] for name, record in RECORDS.items()}

# Runs `rlconform ARGS...` as `python -m app.cli` does, then prints every module loaded.
PROBE = """
import json, sys
from app.cli import main
try:
    main(sys.argv[1:])
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def loaded_after(*arguments: str) -> set[str]:
    """The top-level packages `rlconform ARGS...` loaded."""
    return {name.partition(".")[0] for name in modules_after(*arguments)}


def kind_packages_in(modules: set[str]) -> set[str]:
    """The kinds' packages (checks.plugrl, checks.rlmesh, ...) among `modules`."""
    return {package for package in KIND_PACKAGES.values() if package in modules}


def modules_after(*arguments: str) -> set[str]:
    """Every module `rlconform ARGS...` loaded, dotted names included."""
    return modules_loaded_by(PROBE, *arguments)


def modules_loaded_by(probe: str, *arguments: str) -> set[str]:
    """Every module (dotted names included) `python -c probe ARGS...` loaded, as the probe prints last on stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe, *arguments],
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


@pytest.mark.parametrize("arguments", [("suites",), ("suites", "--json"), ("suites", "rlmesh", "plugrl")])
def test_suites_reads_the_listing_and_imports_no_suite(arguments: tuple[str, ...]) -> None:
    modules = modules_after(*arguments)
    assert "checks.listing" in modules  # the probe saw the command run
    stale = "stale checks/suites_listing.json? run python -m checks.listing --write"
    assert not kind_packages_in(modules), (stale, kind_packages_in(modules))
    heavy = {name.partition(".")[0] for name in modules} & {*SUITE_STACK, "pydantic", "msgpack"}
    assert not heavy, (stale, heavy)


# Each server kind's check against a closed port: the packages it may load (the session suite builds on openai's).
CHECKS = [
    ("plugrl-server", "ws://127.0.0.1:{port}", {"checks.plugrl"}),
    ("openenv", "http://127.0.0.1:{port}", {"checks.openenv"}),
    ("rlmesh", "127.0.0.1:{port}", {"checks.rlmesh"}),
    ("rllink", "tcp://127.0.0.1:{port}", {"checks.rllink"}),
    ("openai-chat", "http://127.0.0.1:{port}", {"checks.openai"}),
    ("session-server", "http://127.0.0.1:{port}", {"checks.openai", "checks.session"}),
    ("ors", "http://127.0.0.1:{port}", {"checks.ors"}),
]


def test_every_server_kind_has_its_check_here() -> None:
    """A kind added to the records without a line in CHECKS fails here instead of escaping the check below."""
    assert {kind for kind, _, _ in CHECKS} == set(kinds_with("reference_server"))


@pytest.mark.parametrize(("kind", "url", "packages"), CHECKS, ids=[kind for kind, _, _ in CHECKS])
def test_check_loads_only_its_own_kind(kind: str, url: str, packages: set[str]) -> None:
    modules = modules_after("check", kind, url.format(port=closed_port()), "--timeout", "0.3", "--quiet")
    assert RECORDS[kind].suite.partition(":")[0] in modules  # the check loaded its suite
    assert kind_packages_in(modules) == packages, kind_packages_in(modules)
    loaded = {name.partition(".")[0] for name in modules}
    assert not loaded & set(WEB_STACK), loaded & set(WEB_STACK)
    assert kind == "rlmesh" or "grpc" not in loaded  # RLMesh's transport, for no other kind
    assert kind != "plugrl-server" or "httpx" not in loaded  # PlugRL speaks WebSocket only


def test_ci_loads_an_http_client_and_no_web_stack() -> None:
    loaded = loaded_after("ci", "--server", f"http://127.0.0.1:{closed_port()}", "--target", "t", "--wait-timeout", "1")
    assert "httpx" in loaded
    assert not loaded & {*WEB_STACK, "numpy", "grpc", "websockets"}, loaded & {*WEB_STACK, "numpy", "grpc"}


def test_a_run_process_loads_no_web_framework() -> None:
    """A run process (one per core beside `serve`'s web process) writes to the database but serves no page: it
    starts without FastAPI, Starlette or uvicorn, which were about a fifth of its start-up CPU (1.58 s before)."""
    probe = "import json, sys, app.run_process\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    loaded = {name.partition(".")[0] for name in modules_loaded_by(probe)}
    assert "sqlalchemy" in loaded
    assert not loaded & {"fastapi", "starlette", "uvicorn"}, loaded & {"fastapi", "starlette", "uvicorn"}
