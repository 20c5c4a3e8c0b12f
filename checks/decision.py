"""What a pure judge returns: a clause decision with its expected and actual, recorded later by a phase.

A judge (a kind's `judging.py`) reads an observed message or exchange and
returns Decisions; it needs no connection and no report, so the same judge
serves a live phase, client grading and a recorded transcript alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from checks.evidence import Evidence
from checks.report import Report


@dataclass(frozen=True)
class Decision:
    """`held` True passes the clause, False misses it (fail, warn or info by its level), None is informational.

    `judged` False: the observation cannot decide the clause at all (recorded as `error`, `actual` saying why).
    """

    clause_id: str
    held: bool | None
    expected: str = ""
    actual: str = ""
    judged: bool = True


def passed(clause_id: str, actual: str, expected: str = "") -> Decision:
    return Decision(clause_id, True, expected=expected, actual=actual)


def missed(clause_id: str, *, expected: str, actual: str) -> Decision:
    return Decision(clause_id, False, expected=expected, actual=actual)


def noted(clause_id: str, actual: str) -> Decision:
    return Decision(clause_id, None, actual=actual)


def unjudged(clause_id: str, why: str) -> Decision:
    return Decision(clause_id, None, actual=why, judged=False)


def record(report: Report, decisions: Decision | Iterable[Decision], evidence: Evidence = None) -> bool:
    """Record every decision in the current phase; whether none of them missed its clause."""
    held = True
    for decision in [decisions] if isinstance(decisions, Decision) else decisions:
        if not decision.judged:
            report.error(decision.clause_id, decision.actual, evidence)
        elif decision.held is None:
            report.info(decision.clause_id, actual=decision.actual, expected=decision.expected, evidence=evidence)
        else:
            report.check(
                decision.held, decision.clause_id, expected=decision.expected, actual=decision.actual, evidence=evidence
            )
            held = held and decision.held
    return held
