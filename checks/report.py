"""Clauses and the report of one run: what each phase decided, with the transcripts that show it.

A phase decides clauses through the `Report` it is handed. Each decision goes
to the report's sink at once, so a service can persist it before the run
finishes; a clause decided twice in one phase only ever gets worse.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from checks.errors import CheckError
from checks.evidence import Evidence, Transcript, evidence_list, truncate
from checks.verdicts import (
    MISSED_VERDICT,
    VERDICT_RANK,
    Gate,
    Level,
    Outcome,
    RolledUp,
    Verdict,
    outcome_of,
    roll_up,
    rolled_verdicts,
    verdict_counts,
)

HARNESS_VERSION = "0.1.0"


@dataclass(frozen=True)
class Clause:
    """One requirement. `id` is stable forever and is also its SPEC.md anchor."""

    id: str
    level: Level
    statement: str


class Catalogue:
    """The clauses of one suite, in declaration order."""

    def __init__(self) -> None:
        self._clauses: dict[str, Clause] = {}
        self._aliases: dict[str, str] = {}

    def add(self, clause_id: str, level: Level | str, statement: str) -> Clause:
        if clause_id in self._clauses:
            raise ValueError(f"clause {clause_id} declared twice")
        clause = Clause(clause_id, Level(level), statement)
        self._clauses[clause_id] = clause
        return clause

    def must(self, clause_id: str, statement: str) -> Clause:
        return self.add(clause_id, Level.MUST, statement)

    def should(self, clause_id: str, statement: str) -> Clause:
        return self.add(clause_id, Level.SHOULD, statement)

    def info(self, clause_id: str, statement: str) -> Clause:
        return self.add(clause_id, Level.INFO, statement)

    def alias(self, old_id: str, new_id: str) -> None:
        """Keep accepting `old_id` (a clause whose meaning changed) as the clause that now covers it."""
        if old_id in self._clauses or old_id in self._aliases:
            raise ValueError(f"{old_id} is already a clause or an alias")
        if new_id not in self._clauses:
            raise ValueError(f"alias {old_id} names unknown clause {new_id}")
        self._aliases[old_id] = new_id

    @property
    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def resolve(self, clause_id: str) -> str:
        """The current id of `clause_id`: itself, or the clause an old id is an alias of."""
        return self._aliases.get(clause_id, clause_id)

    def knows(self, clause_id: str) -> bool:
        """A current clause id or an alias of one."""
        return clause_id in self._clauses or clause_id in self._aliases

    def __getitem__(self, clause_id: str) -> Clause:
        return self._clauses[clause_id]

    def __contains__(self, clause_id: object) -> bool:
        return clause_id in self._clauses

    def __iter__(self) -> Iterator[Clause]:
        return iter(self._clauses.values())

    def __len__(self) -> int:
        return len(self._clauses)


@dataclass
class ClauseResult:
    """The decision on one clause in one phase. Decided again only to get worse."""

    clause_id: str
    level: Level
    verdict: Verdict
    phase: str
    expected: str = ""
    actual: str = ""
    duration: float = 0.0  # seconds from the phase's start to the decision
    checks: int = 1
    transcript_ids: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "clause_id": self.clause_id,
            "level": str(self.level),
            "verdict": str(self.verdict),
            "phase": self.phase,
            "expected": self.expected,
            "actual": self.actual,
            "duration": round(self.duration, 6),
            "checks": self.checks,
            "transcript_ids": list(self.transcript_ids),
        }


class Sink(Protocol):
    """Where a report hands what it decides, as soon as it decides it."""

    def result(self, result: ClauseResult) -> None: ...

    def transcript(self, transcript: Transcript) -> None: ...

    def phase(self, name: str, state: str) -> None: ...


class NullSink:
    def result(self, result: ClauseResult) -> None:
        pass

    def announce(self, url: str, message: str) -> None:
        pass

    def transcript(self, transcript: Transcript) -> None:
        pass

    def phase(self, name: str, state: str) -> None:
        pass


@runtime_checkable
class Announcer(Protocol):
    """A sink that also shows announcements: where a listen-mode run waits, when to restart the client."""

    def announce(self, url: str, message: str) -> None: ...


@runtime_checkable
class ClientWatcher(Protocol):
    """A sink that also records which clients a listen-mode run admitted (their HOST:PORT)."""

    def connected(self, address: str) -> None: ...


class UnknownClause(CheckError, KeyError):
    pass


class Report:
    """Decisions of one run, keyed by (phase, clause id)."""

    def __init__(self, catalogue: Catalogue, sink: Sink | None = None) -> None:
        self.catalogue = catalogue
        self.sink: Sink = sink or NullSink()
        self.results: dict[tuple[str, str], ClauseResult] = {}
        self.transcripts: dict[int, Transcript] = {}
        self.phase = ""
        self._phase_started = time.monotonic()
        self._current: list[Transcript] = []
        self.announcements: list[tuple[str, str]] = []
        self.clients: list[str] = []

    def announce(self, url: str, message: str) -> None:
        """Tell whoever watches the run something they must act on (listen mode: connect a client to `url`)."""
        self.announcements.append((url, message))
        if isinstance(self.sink, Announcer):
            self.sink.announce(url, message)

    def connected(self, address: str) -> None:
        """A client connected to the run's listener from `address`: recorded, so a run says whom it graded."""
        self.clients.append(address)
        if isinstance(self.sink, ClientWatcher):
            self.sink.connected(address)

    # -- connections

    def transcript(self, label: str) -> Transcript:
        """A new transcript for a connection opened by the current phase."""
        transcript = Transcript(len(self.transcripts) + 1, self.phase, label)
        self.transcripts[transcript.id] = transcript
        self._current.append(transcript)
        return transcript

    def begin_phase(self, name: str) -> None:
        self.phase = name
        self._phase_started = time.monotonic()
        self._current = []
        self.sink.phase(name, "running")

    def end_phase(self) -> None:
        for transcript in self._current:
            self.sink.transcript(transcript)
        for (phase, _), result in self.results.items():
            if phase == self.phase:
                self.sink.result(result)
        self.sink.phase(self.phase, "done")

    # -- decisions

    def record(
        self,
        clause_id: str,
        verdict: Verdict,
        *,
        expected: str = "",
        actual: str | Callable[[], str] = "",
        evidence: Evidence = None,
    ) -> ClauseResult:
        """Decide `clause_id` in the current phase. A worse verdict replaces a better one.

        `actual` may be a function, called only when a result is built (a repeat no worse builds none).
        """
        key = (self.phase, clause_id)
        verdict = Verdict(verdict)
        current = self.results.get(key)
        if current is not None and VERDICT_RANK[verdict] <= VERDICT_RANK[current.verdict]:
            current.checks += 1  # the same clause judged again, no worse: count it and build nothing (a hot path)
            return current
        if clause_id not in self.catalogue:
            raise UnknownClause(clause_id)
        clause = self.catalogue[clause_id]
        transcript_ids = [t.id for t in evidence_list(evidence)]
        candidate = ClauseResult(
            clause_id=clause_id,
            level=clause.level,
            verdict=verdict,
            phase=self.phase,
            expected=truncate(expected, 600),
            actual=truncate(actual() if callable(actual) else actual, 600),
            duration=time.monotonic() - self._phase_started,
            transcript_ids=transcript_ids,
        )
        if current is not None:  # a worse verdict replaces the one recorded
            current.checks += 1
            candidate.checks = current.checks
        self.results[key] = candidate
        for transcript_id in transcript_ids:
            self.sink.transcript(self.transcripts[transcript_id])
        self.sink.result(candidate)
        return candidate

    def check(
        self,
        condition: bool,
        clause_id: str,
        *,
        expected: str,
        actual: str | Callable[[], str] = "",
        evidence: Evidence = None,
    ) -> bool:
        """Pass when `condition` holds, else fail, warn or info by the clause's level."""
        verdict = Verdict.PASS if condition else self._missed(clause_id)
        self.record(clause_id, verdict, expected=expected, actual=actual, evidence=evidence)
        return condition

    def passed(self, clause_id: str, *, expected: str = "", actual: str = "", evidence: Evidence = None) -> None:
        self.record(clause_id, Verdict.PASS, expected=expected, actual=actual, evidence=evidence)

    def failed(self, clause_id: str, *, expected: str, actual: str, evidence: Evidence = None) -> None:
        """The clause is missed: `fail`, `warn` or `info` by its level."""
        self.record(clause_id, self._missed(clause_id), expected=expected, actual=actual, evidence=evidence)

    def info(self, clause_id: str, *, actual: str, expected: str = "", evidence: Evidence = None) -> None:
        self.record(clause_id, Verdict.INFO, expected=expected, actual=actual, evidence=evidence)

    def unsupported(self, clause_id: str, why: str, evidence: Evidence = None) -> None:
        self.record(clause_id, Verdict.UNSUPPORTED, actual=why, evidence=evidence)

    def error(self, clause_id: str, why: str, evidence: Evidence = None) -> None:
        self.record(clause_id, Verdict.ERROR, actual=why, evidence=evidence)

    def skip(self, clause_id: str, why: str) -> None:
        self.record(clause_id, Verdict.SKIP, actual=why)

    def _missed(self, clause_id: str) -> Verdict:
        if clause_id not in self.catalogue:
            raise UnknownClause(clause_id)
        return MISSED_VERDICT[self.catalogue[clause_id].level]

    def error_undecided(self, clause_ids: Iterable[str], why: str, evidence: Evidence = None) -> None:
        """Record `error` for each of `clause_ids` the current phase has not decided: why it could not be."""
        for clause_id in clause_ids:
            if not self.decided(clause_id):
                self.error(clause_id, why, evidence)

    def decided(self, clause_id: str, phase: str | None = None) -> bool:
        return (phase or self.phase, clause_id) in self.results

    # -- summaries

    def verdicts(self) -> list[tuple[str, Verdict]]:
        """(clause id, verdict) per phase result; `rolled_up` gives one per clause."""
        return [(r.clause_id, r.verdict) for r in self.results.values()]

    def rolled_up(self) -> list[RolledUp[ClauseResult]]:
        return roll_up(self.results.values(), lambda r: (r.clause_id, r.verdict))

    def outcome(self, gate: Gate = Gate.DEFAULT, expected_failures: Iterable[str] = ()) -> Outcome:
        """The outcome from the rolled-up verdicts, one per clause."""
        return outcome_of(rolled_verdicts(self.rolled_up()), gate, expected_failures)

    def counts(self) -> dict[str, int]:
        """Clauses per rolled-up verdict."""
        return verdict_counts(self.rolled_up())

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness_version": HARNESS_VERSION,
            "counts": self.counts(),
            "outcome": str(self.outcome()),
            "results": [r.to_dict() for r in self.results.values()],
            "transcripts": [t.to_dict() for t in self.transcripts.values()],
        }
