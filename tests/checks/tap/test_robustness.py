"""The traffic never waits for the judges: a full queue leaves messages unjudged and counted (and order no
longer judged on that connection), a judge that raises is `error` for its clauses, and the network policy
and an unreachable upstream refuse the client, never the tap."""

from __future__ import annotations

import time
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidHandshake

from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.tap import plugrl
from checks.tap.copies import Copy, CopyQueue
from checks.tap.judging_process import ProcessQueue
from checks.tap.ledger import Ledger
from checks.tap.run import TapSpec
from checks.verdicts import Outcome, Verdict
from tests.checks.tap.conftest import tapping


class SlowWatcher(plugrl.PlugrlWatcher):
    def judge(self, copy: Copy, ledger: Ledger) -> None:
        time.sleep(0.02)
        super().judge(copy, ledger)


class RaisingWatcher(plugrl.PlugrlWatcher):
    def _action(self, state: Any, message: dict[str, Any], envs: list[int]) -> list[Any]:
        raise RuntimeError("a judge's bug")


def spec_with(watcher: type[plugrl.PlugrlWatcher]) -> TapSpec:
    base = plugrl.spec()
    return TapSpec(base.catalogue, base.active_only, base.raised, watcher)


@pytest.mark.parametrize("judges_in", ["thread", "process"])
async def test_a_full_queue_leaves_messages_unjudged_counted_and_never_misjudged(judges_in):
    queue = CopyQueue(max_items=2) if judges_in == "thread" else ProcessQueue(max_items=2)
    server = await start_reference_server("127.0.0.1", 0, stop_after=40)
    try:
        tap = tapping(spec_with(SlowWatcher), f"ws://127.0.0.1:{server.port}", queue=queue)
        async with tap as tapped:
            started = time.monotonic()
            ended = await ReferenceClient(tapped.url).session()
            forwarded_in = time.monotonic() - started
    finally:
        await server.close()
    ledger = tapped.ledger
    assert ended == "stop"
    assert ledger.unjudged > 0 and ledger.judged_messages + ledger.unjudged == ledger.messages
    assert forwarded_in < 0.02 * ledger.messages  # the session did not wait for the slow judge
    assert tapped.flagged() == set(), tapped.verdicts()


class BrokenWatcher(plugrl.PlugrlWatcher):
    def judge(self, copy: Copy, ledger: Ledger) -> None:
        if copy.number == 5:
            raise RuntimeError("a watcher's bug")
        super().judge(copy, ledger)


async def test_a_watcher_that_raises_in_the_judging_process_is_counted_and_judging_goes_on():
    server = await start_reference_server("127.0.0.1", 0, stop_after=10)
    try:
        async with tapping(spec_with(BrokenWatcher), f"ws://127.0.0.1:{server.port}") as tapped:
            assert tapped.run.judging is not None  # the default: judges in a process of their own
            ended = await ReferenceClient(tapped.url).session()
    finally:
        await server.close()
    assert ended == "stop"
    assert tapped.ledger.judge_faults == ['connection 1: RuntimeError("a watcher\'s bug")']
    assert tapped.ledger.judged_messages == tapped.ledger.messages == tapped.run.relay.stats.messages
    assert tapped.ledger.tallies["plugrl-client.5.2.infer-form"].verdict() is Verdict.PASS


async def test_a_judge_that_raises_is_an_error_for_its_clauses_and_the_connection_goes_on():
    server = await start_reference_server("127.0.0.1", 0, stop_after=10)
    try:
        async with tapping(spec_with(RaisingWatcher), f"ws://127.0.0.1:{server.port}") as tapped:
            ended = await ReferenceClient(tapped.url).session()
    finally:
        await server.close()
    assert ended == "stop"
    tally = tapped.ledger.tallies["plugrl.5.3.time-major"]
    assert tally.verdict() is Verdict.ERROR and "a judge's bug" in tally.last_error
    assert tapped.ledger.outcome() is Outcome.ERROR
    assert tapped.ledger.tallies["plugrl-client.4.2.alternation"].verdict() is Verdict.PASS


@pytest.mark.parametrize("why", ["policy", "unreachable"])
async def test_a_refused_source_or_a_dead_upstream_refuses_the_client(why):
    server = await start_reference_server("127.0.0.1", 0)
    upstream = f"ws://127.0.0.1:{server.port}"
    await server.close()  # for "unreachable" nothing listens there any more
    if why == "policy":
        server = await start_reference_server("127.0.0.1", 0)
        upstream = f"ws://127.0.0.1:{server.port}"
    try:
        async with tapping(plugrl.spec(), upstream, admit=lambda source: why != "policy") as tapped:
            with pytest.raises((OSError, InvalidHandshake)):  # the tap aborts the TCP connection
                async with connect(tapped.url, open_timeout=2):
                    pass
            refused = tapped.run.relay.stats.refused
    finally:
        await server.close()
    assert refused == (1 if why == "policy" else 0)
    assert tapped.ledger.connections == 0
