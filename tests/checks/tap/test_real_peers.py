"""Real peers through the tap: RLlib 2.60's own external client against the reference rllink server, and
OpenEnv 0.10's own Python client (`GenericEnvClient`) against an env served from that release's venv.

Each peer runs in its own venv's python in a session of its own and is killed by pid at teardown; a test
skips, saying which, when its venv is missing.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from checks.rllink.reference import ReferenceServer, start_reference_server
from checks.rllink_client.config_pickle import config_pickle
from checks.rllink_client.policy import Policy
from checks.tap import openenv as tap_openenv
from checks.tap import rllink as tap_rllink
from checks.verdicts import Verdict
from tests.checks.openenv.serving import wait_until_up
from tests.checks.rllink.test_rllib import free_port, kill_session, rllib_python
from tests.checks.tap.conftest import tapping

RLLIB = rllib_python()
RLLIB_CLIENT = (
    "from ray.rllib.examples.envs.classes.utils.dummy_external_client import _dummy_external_client as c; c({})"
)
FRAGMENT = 64
HERE = Path(__file__).parent


def openenv010_python() -> Path | None:
    configured = os.environ.get("RLCONFORM_OPENENV010_PYTHON")
    if configured:
        return Path(configured)
    venv = Path.home() / ".cache" / "rlconform-peers" / "oe10"
    return venv / "bin" / "python" if (venv / ".complete").is_file() else None


class RLlibShapedServer(ReferenceServer):
    """The reference server with a config RLlib's client builds its module from, and weights that module loads."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.policy = Policy(self.obs_dim, self.actions)

    def config_reply(self) -> dict[str, Any]:
        return {"type": "SET_CONFIG", "config": config_pickle(self.obs_dim, self.actions, self.fragment_length)}

    def state_reply(self) -> dict[str, Any]:
        return {"type": "SET_STATE", "state": {"rl_module": self.policy.module_state(), "weights_seq_no": self.seq}}

    def train(self) -> None:
        super().train()
        self.policy.train()


@pytest.mark.skipif(
    RLLIB is None, reason="no RLlib venv: scripts/test creates .venv-rllib, or set RLCONFORM_RLLIB_PYTHON"
)
async def test_rllib_external_client_against_the_reference_server_through_the_tap(tmp_path):
    assert RLLIB is not None
    server = await start_reference_server(fragment_length=FRAGMENT, server_class=RLlibShapedServer)
    client = None
    try:
        async with tapping(tap_rllink.spec(), f"tcp://127.0.0.1:{server.port}", "tcp") as tapped:
            port = int(tapped.url.rsplit(":", 1)[1])
            with (tmp_path / "client.log").open("w") as log:
                client = subprocess.Popen(
                    [str(RLLIB), "-c", RLLIB_CLIENT.format(port)], stdout=log, stderr=subprocess.STDOUT,
                    start_new_session=True,
                )  # fmt: skip
            deadline = time.monotonic() + 240
            while server.seq < 3 and client.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            assert server.seq >= 3, (tmp_path / "client.log").read_text()[-3000:]
    finally:
        if client is not None:
            kill_session(client.pid)
            client.wait(10)
        await server.close()
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in ("rllink.listen.accepts", "rllink.frame.header", "rllink.body.form", "rllink.ping.pong"):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    for clause in ("rllink.config.set-config", "rllink.state.shape", "rllink.seq.monotonic"):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.ledger.tallies["rllink.seq.monotonic"].judged >= 4


OPENENV010 = openenv010_python()
PEER = HERE / "openenv010_peer.py"


@pytest.mark.skipif(
    OPENENV010 is None,
    reason="no OpenEnv 0.10 venv: set RLCONFORM_OPENENV010_PYTHON (or build ~/.cache/rlconform-peers/oe10)",
)
async def test_openenv010_client_drives_episodes_through_the_tap():
    assert OPENENV010 is not None
    port = free_port()
    server = subprocess.Popen(
        [str(OPENENV010), str(PEER), "serve", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        await asyncio.to_thread(wait_until_up, f"http://127.0.0.1:{port}/health", 60.0)
        async with tapping(tap_openenv.spec(), f"http://127.0.0.1:{port}", "http") as tapped:
            driver = await asyncio.create_subprocess_exec(
                str(OPENENV010), str(PEER), "drive", tapped.url, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )  # fmt: skip
            output, _ = await asyncio.wait_for(driver.communicate(), 60)
    finally:
        kill_session(server.pid)
        server.wait(10)
    text = output.decode()
    assert text.rstrip().endswith("DONE"), text
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in (
        "openenv.ws.handshake",
        "openenv.ws.envelope",
        "openenv.ws.reward",
        "openenv.ws.order",
        "openenv.ws.unprompted",
        "openenv.state.shape",
        "openenv.state.step-count",
        "openenv.state.episode-id",
    ):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.ledger.tallies["openenv.ws.envelope"].judged == 10  # two resets and eight steps
