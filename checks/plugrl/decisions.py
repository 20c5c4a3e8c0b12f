"""What a judge returns: clause decisions as values, recorded on a report by whoever holds one.

A judge is a pure function of what was observed (a decoded message, a frame, a
close, a silence); it returns `Decision`s and, when the exchange cannot go on,
why. Probes, sessions and phases record the decisions with `record`, so the same
judge decides a recorded transcript with no connection at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from checks.core import Report
from checks.evidence import Evidence

# "miss" leaves fail, warn or info to the clause's level in the catalogue, as `Report.failed` does.
Outcome = Literal["pass", "miss", "info", "unsupported", "error"]
ValueT = TypeVar("ValueT")


@dataclass(frozen=True)
class Decision:
    """One clause decided: how, what was expected, and what was seen."""

    clause: str
    outcome: Outcome
    expected: str = ""
    actual: str = ""

    @property
    def missed(self) -> bool:
        return self.outcome == "miss"


def passed(clause: str, *, expected: str = "", actual: str = "") -> Decision:
    return Decision(clause, "pass", expected, actual)


def missed(clause: str, *, expected: str, actual: str) -> Decision:
    return Decision(clause, "miss", expected, actual)


def check(condition: bool, clause: str, *, expected: str, actual: str) -> Decision:
    return Decision(clause, "pass" if condition else "miss", expected, actual)


def info(clause: str, *, actual: str, expected: str = "") -> Decision:
    return Decision(clause, "info", expected, actual)


def unsupported(clause: str, why: str) -> Decision:
    return Decision(clause, "unsupported", actual=why)


def error(clause: str, why: str) -> Decision:
    return Decision(clause, "error", actual=why)


@dataclass(frozen=True)
class Judged(Generic[ValueT]):
    """A judge's answer: its decisions, what it read (`value`), and why the exchange cannot
    go on (`stop`, None when it can)."""

    value: ValueT
    decisions: list[Decision] = field(default_factory=list)
    stop: str | None = None


def record(report: Report, decisions: Iterable[Decision], evidence: Evidence = None) -> bool:
    """Record each decision on `report`; whether none of them missed its clause."""
    kept = True
    for decision in decisions:
        clause, expected, actual = decision.clause, decision.expected, decision.actual
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
