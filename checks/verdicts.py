"""Verdicts and how they add up: levels, verdicts, gates, a run's outcome, and the rollup across phases.

One clause may be decided in several phases; `roll_up` is the one rule that
turns those into one verdict per clause, and `outcome_of` turns the rolled-up
verdicts into the run's pass, fail or error. The CLI formats, the service's
pages and counts all go through these.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar


class Level(enum.StrEnum):
    MUST = "MUST"
    SHOULD = "SHOULD"
    INFO = "INFO"


class Verdict(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    INFO = "info"
    UNSUPPORTED = "unsupported"
    SKIP = "skip"
    ERROR = "error"


# Higher wins when one clause is decided more than once, or when rolling up.
VERDICT_RANK: dict[Verdict, int] = {
    Verdict.SKIP: 0,
    Verdict.UNSUPPORTED: 1,
    Verdict.PASS: 2,
    Verdict.INFO: 3,
    Verdict.WARN: 4,
    Verdict.FAIL: 5,
    Verdict.ERROR: 6,
}

MISSED_VERDICT = {Level.MUST: Verdict.FAIL, Level.SHOULD: Verdict.WARN, Level.INFO: Verdict.INFO}


def worst(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The rolled-up verdict: error > fail > warn > info > pass > unsupported > skip."""
    ranked = [Verdict(v) for v in verdicts]
    return max(ranked, key=VERDICT_RANK.__getitem__) if ranked else None


class Gate(enum.StrEnum):
    """Which verdicts fail a run: `default` fails on fail and error, `strict` adds warn."""

    DEFAULT = "default"
    STRICT = "strict"

    def failing(self) -> frozenset[Verdict]:
        """The conformance verdicts that fail a run under this gate (`error` is the harness's, ranked apart)."""
        return frozenset({Verdict.FAIL, Verdict.WARN}) if self is Gate.STRICT else frozenset({Verdict.FAIL})


class Outcome(enum.StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"


def outcome_of(
    verdicts: Iterable[tuple[str, Verdict]],
    gate: Gate = Gate.DEFAULT,
    expected_failures: Iterable[str] = (),
) -> Outcome:
    """The run's outcome from (clause id, verdict) pairs.

    A conformance failure outranks a harness error: a target that crashed on
    hostile input and then refused connections is broken, not unreachable.
    Clauses listed as expected failures are left out.
    """
    expected = set(expected_failures)
    failing = Gate(gate).failing()
    errored = False
    for clause_id, verdict in verdicts:
        if clause_id in expected:
            continue
        if verdict in failing:
            return Outcome.FAIL
        errored = errored or verdict is Verdict.ERROR
    return Outcome.ERROR if errored else Outcome.PASS


EXIT_CODES = {Outcome.PASS: 0, Outcome.FAIL: 1, Outcome.ERROR: 2}


# ---------------------------------------------------------------- rolling up across phases

# A clause judged in several phases: the worst judged verdict wins; a clause no
# phase judged is `error` when a phase could not exercise it, else what it was
# recorded as (info > unsupported > skip). Higher wins.
ROLLUP_RANK: dict[Verdict, int] = {
    Verdict.SKIP: 0,
    Verdict.UNSUPPORTED: 1,
    Verdict.INFO: 2,
    Verdict.ERROR: 3,
    Verdict.PASS: 4,
    Verdict.WARN: 5,
    Verdict.FAIL: 6,
}

ResultT = TypeVar("ResultT")


@dataclass
class RolledUp(Generic[ResultT]):
    """One clause of one run: its rolled-up verdict, the result that decided it, and every phase's result."""

    clause_id: str
    verdict: Verdict
    decisive: ResultT  # the first result, in run order, with the rolled-up verdict
    results: list[ResultT]  # one per phase that recorded the clause, in run order


def roll_up(results: Iterable[ResultT], key: Callable[[ResultT], tuple[str, str]]) -> list[RolledUp[ResultT]]:
    """One entry per clause, in the order clauses were first recorded.

    `key` gives a result's (clause id, verdict). This is the one rule: the
    CLI formats, the service's counts, pages, history and the run's outcome
    all count rolled-up clauses.
    """
    rolled: dict[str, RolledUp[ResultT]] = {}
    for result in results:
        clause_id, verdict_text = key(result)
        verdict = Verdict(verdict_text)
        entry = rolled.get(clause_id)
        if entry is None:
            rolled[clause_id] = RolledUp(clause_id, verdict, result, [result])
            continue
        entry.results.append(result)
        if ROLLUP_RANK[verdict] > ROLLUP_RANK[entry.verdict]:
            entry.verdict, entry.decisive = verdict, result
    return list(rolled.values())


def rolled_verdicts(rolled: Iterable[RolledUp[Any]]) -> list[tuple[str, Verdict]]:
    """(clause id, rolled-up verdict) pairs, what `outcome_of` reads."""
    return [(entry.clause_id, entry.verdict) for entry in rolled]


def verdict_counts(rolled: Iterable[RolledUp[Any]]) -> dict[str, int]:
    """How many clauses have each rolled-up verdict (every verdict present, zeros included)."""
    counts = {str(v): 0 for v in Verdict}
    for entry in rolled:
        counts[str(entry.verdict)] += 1
    return counts


# The prefixes `run_suite` gives an `error` it records; what follows is the cause.
_CAUSE_PREFIXES = ("not run: ", "not exercised: ")


def cause_of(reason: str) -> str:
    """The event behind an `error` reason: "not exercised: X" and "not run: X" are both X."""
    for prefix in _CAUSE_PREFIXES:
        if reason.startswith(prefix):
            return reason[len(prefix) :]
    return reason


@dataclass
class RootCause(Generic[ResultT]):
    """One event that left clauses undecided, where it happened first, and the clauses it cost."""

    reason: str
    phase: str
    first: ResultT  # the first undecided result it explains, for its evidence
    clause_ids: list[str] = field(default_factory=list)
    phases: list[str] = field(default_factory=list)  # every phase it cost clauses in, in run order


def root_causes(
    rolled: Iterable[RolledUp[ResultT]], describe: Callable[[ResultT], tuple[str, str]]
) -> list[RootCause[ResultT]]:
    """Clauses rolled up to `error`, grouped by the event that caused them, biggest group first.

    `describe` gives a result's (phase, reason). Each clause counts under the
    reason of its first `error` result in run order.
    """
    causes: dict[str, RootCause[ResultT]] = {}
    for entry in rolled:
        if entry.verdict is not Verdict.ERROR:
            continue
        phase, reason = describe(entry.decisive)
        cause = cause_of(reason) or "no reason given"
        group = causes.setdefault(cause, RootCause(cause, phase, entry.decisive))
        group.clause_ids.append(entry.clause_id)
        if phase not in group.phases:
            group.phases.append(phase)
    return sorted(causes.values(), key=lambda c: -len(c.clause_ids))
