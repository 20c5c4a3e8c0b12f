"""session-server through the tap: the session-server suite itself, as a client that exercises every route,
drives the reference server (v1 and v2) and nothing is flagged; zoo servers are flagged with their clause."""

from __future__ import annotations

from typing import Any

import pytest

from checks.core import run_suite
from checks.session.reference import serve_app, start_reference_server
from checks.session.suite import SUITE
from checks.tap import session as tap_session
from checks.verdicts import Verdict
from tests.checks.tap.conftest import Tapped, driven_through_the_tap
from tests.zoo.session_server.catalogue import ZOO


async def through_the_tap(running: Any) -> Tapped:
    return await driven_through_the_tap(tap_session.spec(), running, lambda url: run_suite(SUITE, url, {"timeout": 5}))


@pytest.mark.parametrize("tree", ["v1", "v2"])
async def test_the_reference_driven_by_the_suite_passes_through_the_tap(tree):
    tapped = await through_the_tap(await start_reference_server(tree=tree))
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in (*sorted(tap_session.PASSIVE - {"openai.logprobs.content"} - set(tap_session.tap_openai.PASSIVE)),):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert verdicts.get("openai.chat.shape") is Verdict.PASS
    assert tapped.ledger.tallies["session.ss09.retry-topology"].skip_reason == "needs an active run"


FLAGGED = {
    "health-without-status": "session.ss01.health",
    "short-session-ids": "session.ss02.create",
    "delete-answers-200": "session.ss03.lifecycle",
    "detail-errors": "session.ss03.lifecycle",
    "records-other-content": "session.ss05.record-matches-reply",
    "records-keep-stream": "session.ss07.forced-fields",
    "accumulated-drops-last": "session.ss06.tito",
    "tool-call-ids-rewritten": "session.ss14.tool-call-ids",
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
async def test_zoo_servers_are_flagged_through_the_tap(name):
    entry = ZOO[name]
    tapped = await through_the_tap(await serve_app(entry.start(entry.tree)))
    assert FLAGGED[name] in tapped.flagged(), tapped.verdicts()
