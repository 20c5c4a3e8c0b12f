"""ORS through the tap: the ors suite itself, as a client that exercises every route, drives the reference
server and nothing is flagged; zoo servers are flagged with their clause where the traffic decides it."""

from __future__ import annotations

from typing import Any

import pytest

from checks.core import run_suite
from checks.ors.reference import start_reference_server
from checks.ors.suite import SUITE
from checks.tap import ors as tap_ors
from checks.verdicts import Verdict
from tests.checks.tap.conftest import Tapped, driven_through_the_tap
from tests.zoo.ors.catalogue import QUICK_OPTIONS, ZOO, start


async def through_the_tap(running: Any) -> Tapped:
    return await driven_through_the_tap(tap_ors.spec(), running, lambda url: run_suite(SUITE, url, QUICK_OPTIONS))


async def test_the_reference_driven_by_the_suite_passes_through_the_tap():
    tapped = await through_the_tap(await start_reference_server())
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in sorted(tap_ors.PASSIVE - {"ors.session.create-session-form"}):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert verdicts["ors.session.create-session-form"] is Verdict.INFO
    assert tapped.ledger.tallies["ors.call.resume"].skip_reason == "needs an active run"


PASSIVE_FAULTS = sorted(name for name, entry in ZOO.items() if entry.clause in tap_ors.PASSIVE)


def test_most_of_the_zoo_is_decided_by_traffic():
    assert len(PASSIVE_FAULTS) >= 18


@pytest.mark.parametrize("name", PASSIVE_FAULTS)
async def test_zoo_servers_are_flagged_through_the_tap(name):
    tapped = await through_the_tap(await start(name))
    assert ZOO[name].clause in tapped.flagged(), tapped.verdicts()
