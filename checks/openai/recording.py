"""Recording one phase's decisions so that a "not judged" note never hides a judgement.

A report keeps the worst verdict a phase gives a clause, and `info` ranks above `pass`: a
clause passed on one reply and not judged on another (a refused or cut request) would read
`info`. The stream and tools phases judge several requests per clause, so they record the
judged decisions at once and keep the notes until the phase ends, recording each only for a
clause nothing in the phase judged.
"""

from __future__ import annotations

from collections.abc import Iterable

from checks.decision import Decision, info, record
from checks.evidence import Evidence
from checks.report import Report


class PhaseRecord:
    def __init__(self, report: Report) -> None:
        self.report = report
        self.notes: dict[str, tuple[Decision, Evidence]] = {}

    def record(self, decisions: Decision | Iterable[Decision], evidence: Evidence = None) -> bool:
        """Record the judged decisions now and keep the first note per clause; whether none missed."""
        judged = []
        for decision in [decisions] if isinstance(decisions, Decision) else decisions:
            if decision.outcome == "info":
                self.notes.setdefault(decision.clause_id, (decision, evidence))
            else:
                judged.append(decision)
        return record(self.report, judged, evidence)

    def note(self, clause_id: str, why: str) -> None:
        """A clause not judged, with why, unless something in the phase judges it."""
        self.notes.setdefault(clause_id, (info(clause_id, actual=why), None))

    def close(self) -> None:
        """Record the notes of the clauses the phase did not judge."""
        for clause_id, (decision, evidence) in self.notes.items():
            if not self.report.decided(clause_id):
                record(self.report, decision, evidence)


def offered(report: Report, profiled: bool, clause_ids: Iterable[str], why: str) -> bool:
    """`profiled`: whether the profile offers what `clause_ids` test; if not, each is recorded unsupported, `why`."""
    if not profiled:
        for clause_id in clause_ids:
            report.unsupported(clause_id, why)
    return profiled
