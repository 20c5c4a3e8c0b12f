"""The tap's printed summary names the reason for unjudged messages only when there were some."""

from __future__ import annotations

from checks.tap.ledger import Ledger, summary_lines


def first_line(unjudged: int) -> str:
    ledger = Ledger([], clock=lambda: 0.0)  # type: ignore[arg-type]  # no clauses: only the counts line
    ledger.connections, ledger.messages = 1, 5
    ledger.judged_messages, ledger.unjudged = 5 - unjudged, unjudged
    return summary_lines(ledger)[0]


def test_no_reason_when_every_message_was_judged() -> None:
    assert first_line(0).endswith("5 judged, 0 unjudged")


def test_the_reason_when_some_were_not_judged() -> None:
    assert first_line(2).endswith("3 judged, 2 unjudged (judging queue full)")
