"""Judges in a spawned process (how a tap the service hosts judges): the kind's tap is made again in the child
from its origin, verdicts and counts come back as from a forked one, and a tap without an origin is refused."""

from __future__ import annotations

import multiprocessing

import pytest

from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.tap import plugrl
from checks.tap.judging_process import ProcessQueue
from checks.tap.kinds import tap_spec
from checks.tap.run import TapRun
from tests.checks.tap.conftest import tapping
from tests.zoo.plugrl_server.faults_content import NoEnvIds


async def test_the_reference_pair_is_judged_whole_in_a_spawned_process():
    server = await start_reference_server("127.0.0.1", 0, stop_after=20)
    earlier = {child.pid for child in multiprocessing.active_children()}  # another test's may still be ending
    try:
        async with tapping(tap_spec("plugrl", {}), server.url, queue=ProcessQueue(start="spawn")) as tapped:
            children = multiprocessing.active_children()
            judges = [child for child in children if child.name == "tap-judges" and child.pid not in earlier]
            assert len(judges) == 1 and judges[0]._start_method == "spawn"  # type: ignore[attr-defined]
            assert await ReferenceClient(tapped.url).session() == "stop"
    finally:
        await server.close()
    ledger = tapped.ledger
    assert ledger.messages >= 20 and ledger.judged_messages == ledger.messages, ledger.to_dict()
    assert tapped.flagged() == set(), tapped.verdicts()


async def test_a_zoo_server_is_flagged_by_spawned_judges():
    server = await NoEnvIds(stop_after=12).start()
    try:
        async with tapping(tap_spec("plugrl", {}), server.url, queue=ProcessQueue(start="spawn")) as tapped:
            await ReferenceClient(tapped.url).session()
    finally:
        await server.close()
    assert "plugrl.4.3.env-ids-order" in tapped.flagged(), tapped.verdicts()


def test_a_tap_made_without_its_origin_cannot_judge_in_a_spawned_process():
    with pytest.raises(ValueError, match="origin"):
        TapRun(plugrl.spec(), "ws://127.0.0.1:9", queue=ProcessQueue(start="spawn"))
