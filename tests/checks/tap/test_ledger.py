"""Verdicts over time: a MUST violated once fails, a SHOULD warns, an error outranks passes, the first and
last violation keep a window of the transcript (lines before and after), and windows roll over by count."""

from __future__ import annotations

from checks.decision import error, missed, passed, unsupported
from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.report import Catalogue
from checks.tap import plugrl
from checks.tap.ledger import NEEDS_ACTIVE_RUN, NOT_EXERCISED, Ledger, Rollover
from checks.verdicts import Outcome, Verdict
from tests.checks.tap.conftest import tapping


def catalogue() -> Catalogue:
    clauses = Catalogue()
    clauses.must("toy.must", "A must.")
    clauses.should("toy.should", "A should.")
    clauses.must("toy.active", "Needs a probe.")
    clauses.must("toy.unseen", "Never exercised.")
    return clauses


def test_one_violation_of_a_must_fails_among_many_passes_and_keeps_its_window():
    ledger = Ledger(catalogue(), active_only=["toy.active"])
    for n in range(6):
        ledger.note(1, f"line {n}")
        ledger.decide(1, [passed("toy.must", actual="fine"), passed("toy.should")])
    ledger.decide(1, [missed("toy.must", expected="x", actual="y")])
    ledger.note(1, "after 1")
    ledger.note(1, "after 2")
    ledger.note(1, "after 3")
    tally = ledger.tallies["toy.must"]
    assert (tally.judged, tally.violated, tally.verdict()) == (7, 1, Verdict.FAIL)
    assert tally.first is not None and tally.first.window == [
        "connection 1",
        "line 2",
        "line 3",
        "line 4",
        "line 5",
        "after 1",
        "after 2",
    ]
    assert ledger.tallies["toy.should"].verdict() is Verdict.PASS
    assert ledger.tallies["toy.active"].skip_reason == NEEDS_ACTIVE_RUN
    assert ledger.tallies["toy.unseen"].skip_reason == NOT_EXERCISED
    assert ledger.outcome() is Outcome.FAIL


def test_a_should_warns_an_error_errs_and_a_profile_raises_a_should_to_must():
    ledger = Ledger(catalogue())
    ledger.decide(1, [missed("toy.should", expected="x", actual="y"), error("toy.must", "why")])
    assert ledger.tallies["toy.should"].verdict() is Verdict.WARN
    assert ledger.tallies["toy.must"].verdict() is Verdict.ERROR
    assert ledger.outcome() is Outcome.ERROR
    raised = Ledger(catalogue(), raised=["toy.should"])
    raised.decide(1, [missed("toy.should", expected="x", actual="y")])
    assert raised.tallies["toy.should"].verdict() is Verdict.FAIL


def test_an_unsupported_feature_is_neither_a_pass_nor_a_miss():
    ledger = Ledger(catalogue())
    ledger.decide(1, [unsupported("toy.should", "the peer offers no reuse")])
    assert ledger.tallies["toy.should"].verdict() is Verdict.UNSUPPORTED
    ledger.decide(1, [passed("toy.should", actual="fine")])
    assert ledger.tallies["toy.should"].verdict() is Verdict.PASS


async def test_windows_roll_over_by_message_count():
    server = await start_reference_server("127.0.0.1", 0, stop_after=20)
    try:
        tap = tapping(plugrl.spec(), f"ws://127.0.0.1:{server.port}", rollover=Rollover(messages=10))
        async with tap as tapped:
            assert await ReferenceClient(tapped.url).session() == "stop"
    finally:
        await server.close()
    windows = tapped.windows
    assert len(windows) >= 3
    assert sum(window.messages for window in windows) == tapped.run.relay.stats.messages
    assert all(window.outcome() is Outcome.PASS for window in windows)
    # Order carried across windows: the last window that judged anything (one that closed on the 10th message
    # may leave an empty window open at the stop) judged alternation too.
    last = next(window for window in reversed(windows) if window.judged_messages)
    assert last is not windows[0] and last.tallies["plugrl-client.4.2.alternation"].judged >= 1
