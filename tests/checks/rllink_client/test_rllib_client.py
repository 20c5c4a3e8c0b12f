"""The real peer: RLlib 2.60's own dummy external client (CartPole, msgpack dialect) against rllink-client.

The client runs in the RLlib venv's python (RLCONFORM_RLLIB_PYTHON, else
`~/.cache/rlconform-peers/rllib/bin/python`) in a session of its own, and is killed by pid at
teardown. It imports Ray and torch but starts no Ray cluster. It unpickles
the checker's hand-built config (Ray executes it; the checker never does) and
raises ConnectionError when the server closes, so it does not come back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checks.rllink.test_rllib import REPO_ROOT, kill_session, rllib_python
from tests.realpeers.verdicts import faults_of_json, rllib_differences

PYTHON = rllib_python()
pytestmark = pytest.mark.skipif(
    PYTHON is None, reason="no RLlib venv: scripts/test builds ~/.cache/rlconform-peers/rllib (RLCONFORM_RLLIB_PYTHON)"
)
CLIENT = "from ray.rllib.examples.envs.classes.utils.dummy_external_client import _dummy_external_client as c; c({})"


def test_rllib_dummy_client_against_rllink_client(tmp_path: Path) -> None:
    assert PYTHON is not None
    check = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "check", "rllink-client", "--listen", "127.0.0.1:0", "--timeout", "30",
         "--json", str(tmp_path / "report.json"),
         "--option", "connect_deadline=120", "--option", "recycle=1", "--option", "reconnect_window=8",
         "--option", "fragment_length=64", "--option", "batches=2"],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True,
    )  # fmt: skip
    client = None
    try:
        assert check.stdout is not None
        url = check.stdout.readline().split()[-1]
        port = int(url.rsplit(":", 1)[1])
        with (tmp_path / "client.log").open("w") as log:
            client = subprocess.Popen(
                [str(PYTHON), "-c", CLIENT.format(port)], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        code = check.wait(timeout=300)
        output = check.stdout.read()
        print(output)
        lines = [line.strip() for line in output.splitlines()]
        faults = faults_of_json(json.loads((tmp_path / "report.json").read_text()))
        assert rllib_differences(faults, "dummy external client") == {}, output
        assert code == 0, output
        for clause in ("frame.header", "handshake.config-state-first", "batch.size", "episode.shape",
                       "values.logp", "onpolicy.weights", "chunk.continuity"):  # fmt: skip
            assert any(line.startswith("ok") and f"rllink-client.{clause}" in line for line in lines), clause
    finally:
        for process in (check, client):
            if process is not None:
                kill_session(process.pid)
                process.wait(10)
