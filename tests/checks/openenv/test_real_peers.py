"""Real OpenEnv servers, each checked with default options: their verdicts are held to a table.

Two peer venvs (built by scripts/test): openenv 0.10.0 (RLCONFORM_OPENENV010_PYTHON)
and openenv-core 0.3.0 (RLCONFORM_OPENENV03_PYTHON). Each serves, with uvicorn from
its own venv: the env `openenv init` generates (made at test time by the package's
CLI), an MCP env on the package's MCP base, and envs of tests/realpeers/openenv on
its base classes; 0.10.0 also serves the template in production mode. Every
non-pass verdict in the tables is a fault of the package, explained with its source
line in docs/real-peers.md (## OpenEnv); a change of verdict fails here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from checks.core import Verdict
from tests.checks.openenv.helpers import check, verdict_of, verdicts
from tests.checks.openenv.serving import wait_until_up

pytestmark = pytest.mark.realpeer

PEER_ENVS = Path(__file__).resolve().parents[2] / "realpeers" / "openenv"
VENVS = {"0.10.0": "RLCONFORM_OPENENV010_PYTHON", "0.3.0": "RLCONFORM_OPENENV03_PYTHON"}
# Short waits: the envs answer in milliseconds; the suite's defaults are otherwise kept.
OPTIONS = {"timeout": 5.0, "latency_rounds": 5}

# (version, peer) -> {clause: worst verdict} for every fail, warn and error of the run.
EXPECTED: dict[tuple[str, str], dict[str, Verdict]] = {
    ("0.10.0", "init template"): {},
    ("0.10.0", "init template, production mode"): {},
    ("0.10.0", "mcp"): {},
    ("0.10.0", "own-reset"): {},
    ("0.10.0", "deterministic"): {},
    ("0.10.0", "endless"): {},
    ("0.10.0", "capacity-one"): {},
    ("0.3.0", "init template"): {"openenv.state.episode-id": Verdict.FAIL},
    ("0.3.0", "mcp"): {"openenv.schema.observation-valid": Verdict.FAIL, "openenv.mcp.input-schema": Verdict.WARN},
    ("0.3.0", "own-reset"): {"openenv.schema.observation-valid": Verdict.FAIL},
    ("0.3.0", "deterministic"): {},
    ("0.3.0", "endless"): {},
    ("0.3.0", "capacity-one"): {},
}
TEMPLATES = {"init template": {}, "init template, production mode": {"OPENENV_MODE": "production"}}


def peer_python(version: str) -> str | None:
    python = os.environ.get(VENVS[version])
    return python if python and Path(python).exists() else None


@pytest.fixture(scope="module")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], str]]:
    """(version, peer) -> base URL, for every venv that is there; all servers start at once.

    Per venv: the template `openenv init my_env` generated with that version's CLI
    (0.10.0's also in production mode), and one process serving our envs mounted
    under their names (tests/realpeers/openenv/peer_envs.py)."""
    with contextlib.ExitStack() as stack:
        pythons = {version: python for version in VENVS if (python := peer_python(version)) is not None}
        starting: list[tuple[tuple[str, str], str]] = []
        for version, python in pythons.items():  # our envs first: they import while the templates are made
            mounted = stack.enter_context(serve(python, PEER_ENVS, "peer_envs:mounted_app", True, {}))
            ours = [peer for (v, peer) in EXPECTED if v == version and peer not in TEMPLATES]
            starting += [((version, peer), f"{mounted}/{peer}") for peer in ours]
        made = {version: tmp_path_factory.mktemp(f"init-{version}") for version in pythons}
        inits = [
            subprocess.Popen(
                [str(Path(python).with_name("openenv")), "init", "my_env"],
                cwd=made[version],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for version, python in pythons.items()
        ]
        for init in inits:
            assert init.wait(timeout=120) == 0, "openenv init failed"
        for version, python in pythons.items():
            for peer, env in TEMPLATES.items():
                if (version, peer) in EXPECTED:
                    url = stack.enter_context(serve(python, made[version] / "my_env", "server.app:app", False, env))
                    starting.append(((version, peer), url))
        for _, url in starting:
            wait_until_up(url + "/health", 90.0)
        yield dict(starting)


@contextlib.contextmanager
def serve(python: str, cwd: Path, target: str, factory: bool, env: dict[str, str]) -> Iterator[str]:
    """uvicorn from the peer venv on a socket bound here to a free 127.0.0.1 port; stopped on exit."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    command = [python, "-m", "uvicorn", target, "--fd", str(sock.fileno()), "--log-level", "warning"]
    command += ["--factory"] if factory else []
    process = subprocess.Popen(
        command,
        cwd=cwd,
        pass_fds=(sock.fileno(),),
        env={**os.environ, "PYTHONPATH": str(cwd), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        sock.close()


@pytest.mark.parametrize(("version", "peer"), list(EXPECTED), ids=[f"{v} {p}" for v, p in EXPECTED])
async def test_real_peer_verdicts_match_the_documented_table(version, peer, peers):
    if (version, peer) not in peers:
        pytest.skip(f"{VENVS[version]} is not set (scripts/test builds the openenv {version} venv)")
    report = await check(peers[(version, peer)], OPTIONS)
    found = verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    seen = {clause: verdict_of(report, clause) for clause in found}
    assert seen == EXPECTED[(version, peer)], found


@pytest.mark.parametrize("peer", list(TEMPLATES))
async def test_production_mode_is_detected_on_the_0_10_template(peer, peers):
    """OPENENV_MODE=production, read from the wire: HTTP /reset, /step, /state give 404 while /ws serves
    episodes; `/harness` is refused (403) in both modes, the template being no harness env."""
    if ("0.10.0", peer) not in peers:
        pytest.skip(f"{VENVS['0.10.0']} is not set (scripts/test builds the openenv 0.10.0 venv)")
    report = await check(peers[("0.10.0", peer)], OPTIONS, ["production"])
    harness = report.results[("production", "openenv.production.harness")]
    assert harness.verdict is Verdict.PASS and "HTTP 403" in harness.actual, harness.actual
    absent = report.results[("production", "openenv.production.http-absent")]
    episodes = report.results[("production", "openenv.production.ws-episodes")]
    if TEMPLATES[peer]:
        assert absent.verdict is Verdict.PASS, absent.actual
        assert episodes.verdict is Verdict.INFO and "reset -> observation, state -> state" in episodes.actual
    else:
        assert {absent.verdict, episodes.verdict} == {Verdict.UNSUPPORTED}
