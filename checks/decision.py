"""What a judge returns: clause decisions as values, recorded on a report by whoever holds one.

A judge (a kind's `judging.py`) is a pure function of what was observed (a decoded
message, a frame, a reply, a close, a silence); it returns `Decision`s and, when the
exchange cannot go on, why. It needs no connection and no report, so the same judge
decides a live phase, a graded client, a tap's copy of the traffic and a recorded
transcript alike. This is the one decision type of the project: every kind and the
tap's ledger read these five outcomes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from checks.evidence import Evidence
from checks.report import Report

# "miss" leaves fail, warn or info to the clause's level in the catalogue, as `Report.failed` does;
# "error" is a clause the observation could not decide (recorded as `error`, `actual` saying why).
DecisionOutcome = Literal["pass", "miss", "info", "unsupported", "error"]
ValueT = TypeVar("ValueT")


@dataclass(frozen=True)
class Decision:
    """One clause decided: how, what was expected, and what was seen."""

    clause_id: str
    outcome: DecisionOutcome
    expected: str = ""
    actual: str = ""

    @property
    def missed(self) -> bool:
        return self.outcome == "miss"


def passed(clause_id: str, *, actual: str = "", expected: str = "") -> Decision:
    return Decision(clause_id, "pass", expected, actual)


def missed(clause_id: str, *, expected: str, actual: str) -> Decision:
    return Decision(clause_id, "miss", expected, actual)


def check(condition: bool, clause_id: str, *, expected: str, actual: str) -> Decision:
    """Passed when `condition` holds, else missed."""
    return Decision(clause_id, "pass" if condition else "miss", expected, actual)


def check_problems(problems: Sequence[str], clause_id: str, *, expected: str, fine: str) -> Decision:
    """Passed when nothing is wrong, else missed; the evidence names the problems, or says `fine`."""
    return check(not problems, clause_id, expected=expected, actual="; ".join(problems) or fine)


def info(clause_id: str, *, actual: str, expected: str = "") -> Decision:
    return Decision(clause_id, "info", expected, actual)


def unsupported(clause_id: str, why: str) -> Decision:
    return Decision(clause_id, "unsupported", actual=why)


def error(clause_id: str, why: str) -> Decision:
    return Decision(clause_id, "error", actual=why)


@dataclass(frozen=True)
class Judged(Generic[ValueT]):
    """A judge's answer: its decisions, what it read (`value`), and why the exchange cannot
    go on (`stop`, None when it can)."""

    value: ValueT
    decisions: list[Decision] = field(default_factory=list)
    stop: str | None = None


def record(report: Report, decisions: Decision | Iterable[Decision], evidence: Evidence = None) -> bool:
    """Record each decision in the current phase of `report`; whether none of them missed its clause."""
    kept = True
    for decision in [decisions] if isinstance(decisions, Decision) else decisions:
        clause, expected, actual = decision.clause_id, decision.expected, decision.actual
        if decision.outcome == "pass":
            report.passed(clause, expected=expected, actual=actual, evidence=evidence)
        elif decision.outcome == "miss":
            report.failed(clause, expected=expected, actual=actual, evidence=evidence)
            kept = False
        elif decision.outcome == "info":
            report.info(clause, expected=expected, actual=actual, evidence=evidence)
        elif decision.outcome == "unsupported":
            report.unsupported(clause, actual, evidence)
        else:
            report.error(clause, actual, evidence)
    return kept
