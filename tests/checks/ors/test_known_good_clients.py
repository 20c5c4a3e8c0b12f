"""ors-sdk's and openreward's clients drive the reference server end to end, as a trainer would."""

import asyncio
import json
import os

import pytest

from checks.ors.reference import start_reference_server
from tests.checks.ors.peers import PEER_PYTHON, PEERS, needs_peers

pytestmark = [pytest.mark.realpeer, needs_peers]


@pytest.mark.parametrize("which", ["ors", "openreward"])
async def test_a_real_client_runs_an_episode_on_the_reference(which):
    running = await start_reference_server()
    env = {**os.environ, "OPENREWARD_DISABLE_UPDATE_CHECK": "1"}
    try:
        process = await asyncio.create_subprocess_exec(
            PEER_PYTHON, str(PEERS / "drive_clients.py"), which, running.url,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(), 120)
    finally:
        await running.close()
    assert process.returncode == 0, err.decode()[-3000:]
    seen = json.loads(out)
    assert seen["splits"] == ["train", "test"] and seen["num_tasks"] == 3
    assert seen["prompt"] == ["Count to 2 with step."]
    assert seen["tools"] == ["dump", "fail", "sleep", "step"]
    assert seen["dump_chars"] == 10_000
    assert seen["steps"] == [[0.0, False], [0.0, False], [1.0, True]]
    assert seen["after_finished"] is not None  # the refusal reaches the client as its own error
    assert seen["raising"] is not None
