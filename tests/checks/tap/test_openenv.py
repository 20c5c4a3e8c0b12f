"""OpenEnv through the tap: an openenv-core env driven over HTTP and /ws passes; zoo servers are flagged with
their clause where the traffic exercises it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import websockets

from checks.tap import openenv as tap_openenv
from checks.tap.kinds import tap_spec
from checks.verdicts import Verdict
from tests.checks.openenv import envs
from tests.checks.openenv.serving import serve_in_thread
from tests.checks.tap.conftest import tapping
from tests.zoo.openenv.catalogue import ZOO

EPISODE: list[dict[str, Any]] = [
    {"type": "reset", "data": {"task_id": "t1", "seed": 7, "episode_id": "ep-1"}},
    {"type": "step", "data": {"answer": "half"}},
    {"type": "state"},
    {"type": "step", "data": {"answer": ""}},  # refused by /schema.action: not a step
    {"type": "state"},
    {"type": "step", "data": {"answer": "paris"}},
    {"type": "state"},
]


async def drive(url: str) -> list[Any]:
    """What a client does: discovery over HTTP, then one episode on /ws, ended by a close message."""
    async with httpx.AsyncClient(base_url=url, timeout=5.0) as http:
        for path in ("/health", "/metadata", "/schema", "/openapi.json"):
            await http.get(path)
    frames = []
    async with websockets.connect(url.replace("http://", "ws://") + "/ws", max_size=None) as ws:
        for message in EPISODE:
            await ws.send(json.dumps(message))
            frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5.0)))
        await ws.send(json.dumps({"type": "close"}))
        try:
            while True:
                frames.append(json.loads(await asyncio.wait_for(ws.recv(), 5.0)))
        except websockets.ConnectionClosed:
            pass
    return frames


async def test_an_openenv_core_env_passes_through_the_tap():
    with serve_in_thread(envs.quiz_app()) as url:
        async with tapping(tap_openenv.spec(), url, "http") as tapped:
            frames = await drive(tapped.url)
    assert [frame["type"] for frame in frames] == ["observation", "observation", "state", "error", "state"] + [
        "observation",
        "state",
    ]
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in (
        "openenv.discover.health",
        "openenv.discover.schema",
        "openenv.mode.consistent",
        "openenv.ws.handshake",
        "openenv.ws.envelope",
        "openenv.ws.order",
        "openenv.schema.observation-valid",
        "openenv.schema.action-accepted",
        "openenv.state.step-count",
        "openenv.state.episode-id",
        "openenv.errors.codes",
        "openenv.close.clean",
    ):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.ledger.tallies["openenv.state.step-count"].judged == 3
    assert tapped.ledger.tallies["openenv.capacity.group"].skip_reason == "needs an active run"


FLAGGED = {
    "flat-envelope": {"openenv.ws.envelope"},
    "bool-reward": {"openenv.ws.reward-number"},
    "health-500": {"openenv.discover.health"},
    "ignores-episode-id": {"openenv.state.episode-id"},
    "close-reply": {"openenv.close.clean"},
    "greets-on-connect": {"openenv.ws.unprompted"},
    "step-count-off": {"openenv.state.step-count"},
    "counts-refused-steps": {"openenv.state.step-count"},
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
async def test_zoo_servers_are_flagged_through_the_tap(name):
    with serve_in_thread(ZOO[name].start()) as url:
        async with tapping(tap_openenv.spec(), url, "http") as tapped:
            await drive(tapped.url)
    assert tapped.flagged() == FLAGGED[name], tapped.verdicts()
    first = tapped.ledger.tallies[sorted(FLAGGED[name])[0]].first
    assert first is not None and first.window[0].startswith("connection")


def test_options_are_read_as_json_and_unknown_ones_refused():
    assert tap_spec("openenv", {"reward_range": "[-1, 1]"}).catalogue is not None
    with pytest.raises(ValueError, match="takes only"):
        tap_spec("openenv", {"group_size": "3"})
    with pytest.raises(ValueError, match="options"):
        tap_spec("openenv", {"reward_range": "[3, 1]"})
