"""The check engine: clauses, verdicts, transcripts, reports, phases and suites.

A suite is an ordered list of phases. A phase is one async function that
drives a target and decides clauses through the `Report` it is handed. Each
decided result goes to the report's sink at once, so a service can persist it
before the run finishes. Nothing here knows about the web app.
"""

from __future__ import annotations

import asyncio
import enum
import math
import time
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import pydantic

# Re-exported: suites import the whole engine API from here.
from checks.evidence import Transcript as Transcript
from checks.evidence import summarize as summarize
from checks.evidence import truncate as truncate

HARNESS_VERSION = "0.1.0"


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


# ---------------------------------------------------------------- results


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

    def transcript(self, transcript: Transcript) -> None:
        pass

    def phase(self, name: str, state: str) -> None:
        pass


class UnknownClause(KeyError):
    pass


# What a decision may point at: the transcripts of the connections that show it.
Evidence = Transcript | Sequence[Transcript] | None


def evidence_list(evidence: Evidence) -> list[Transcript]:
    if evidence is None:
        return []
    if isinstance(evidence, Transcript):
        return [evidence]
    return list(evidence)


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
        actual: str = "",
        evidence: Evidence = None,
    ) -> ClauseResult:
        """Decide `clause_id` in the current phase. A worse verdict replaces a better one."""
        if clause_id not in self.catalogue:
            raise UnknownClause(clause_id)
        clause = self.catalogue[clause_id]
        transcript_ids = [t.id for t in evidence_list(evidence)]
        key = (self.phase, clause_id)
        candidate = ClauseResult(
            clause_id=clause_id,
            level=clause.level,
            verdict=Verdict(verdict),
            phase=self.phase,
            expected=truncate(expected, 600),
            actual=truncate(actual, 600),
            duration=time.monotonic() - self._phase_started,
            transcript_ids=transcript_ids,
        )
        current = self.results.get(key)
        if current is not None:
            current.checks += 1
            if VERDICT_RANK[candidate.verdict] <= VERDICT_RANK[current.verdict]:
                return current
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
        shown = actual() if callable(actual) else actual
        self.record(clause_id, verdict, expected=expected, actual=shown, evidence=evidence)
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
        return [(r.clause_id, r.verdict) for r in self.results.values()]

    def outcome(self, gate: Gate = Gate.DEFAULT, expected_failures: Iterable[str] = ()) -> Outcome:
        return outcome_of(self.verdicts(), gate, expected_failures)

    def counts(self) -> dict[str, int]:
        counts = {str(v): 0 for v in Verdict}
        for result in self.results.values():
            counts[str(result.verdict)] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        return {
            "harness_version": HARNESS_VERSION,
            "counts": self.counts(),
            "outcome": str(self.outcome()),
            "results": [r.to_dict() for r in self.results.values()],
            "transcripts": [t.to_dict() for t in self.transcripts.values()],
        }


# ---------------------------------------------------------------- suites


class PhaseStopped(Exception):
    """The current phase cannot go on: the one way a phase stops early.

    Whatever the stop itself proves is recorded before raising; `run_suite`
    then records every clause of the phase still undecided as `error`
    ("not exercised: <reason>"), with `evidence` attached.
    """

    def __init__(self, reason: str, evidence: Evidence = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.evidence = evidence


class TargetUnreachable(PhaseStopped):
    """The harness could not reach the target at all (refused, no route, bad address).

    It stops the run, not only the phase: later phases are `error` too.
    """


class NoReply(Exception):
    """The target did not answer within the deadline (any transport)."""

    def __init__(self, message: str = "nothing arrived before the deadline", timeout: float | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout


class SuiteOptions(pydantic.BaseModel):
    """Options every suite has. Suites subclass this; fields are validated and documented."""

    model_config = pydantic.ConfigDict(extra="forbid")

    timeout: float = pydantic.Field(10.0, gt=0, le=600, description="Deadline in seconds for each step of a phase.")


OptionsT = TypeVar("OptionsT", bound=SuiteOptions)
StateT = TypeVar("StateT")


class PhaseContext(Generic[OptionsT, StateT]):
    """What a phase function gets: the target, the validated options, the report,
    and `state`, what this run has learned so far (one object per run, shared by its phases)."""

    def __init__(self, url: str, options: OptionsT, report: Report, state: StateT) -> None:
        self.url = url
        self.options = options
        self.report = report
        self.state = state
        self.timeout = options.timeout


PhaseFunction = Callable[[PhaseContext[Any, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Phase:
    name: str
    run: PhaseFunction
    clauses: tuple[str, ...]
    description: str = ""
    default: bool = True  # opt-in phases (like a run-ending `stop`) are False
    budget: float = 6.0  # the phase's own deadline, in step timeouts, plus a second
    named_only: bool = False  # an opt-in phase that runs only when named, never with include_optional
    # Seconds the phase waits by design (a late feedback, a server's own timeout), on top of its budget.
    waits: Callable[[Any], float] | None = None

    def deadline(self, options: SuiteOptions) -> float:
        return self.budget * options.timeout + 1.0 + (self.waits(options) if self.waits else 0.0)


@dataclass(frozen=True)
class Suite:
    kind: str
    title: str
    url_schemes: tuple[str, ...]  # () means HOST:PORT with no scheme
    options_model: type[SuiteOptions]
    phases: tuple[Phase, ...]
    catalogue: Catalogue
    spec_version: str = "1"
    url_example: str = ""
    # Makes the per-run state every phase context carries (`PhaseContext.state`).
    new_state: Callable[[], Any] = lambda: None

    def phase(self, name: str) -> Phase:
        for phase in self.phases:
            if phase.name == name:
                return phase
        raise KeyError(name)

    def select(self, names: Sequence[str] | None = None, include_optional: bool = False) -> list[Phase]:
        """The phases to run, in suite order; unknown names raise ValueError.

        Phase names are hyphenated; `render_close` is read as `render-close`.
        """
        if names:
            names = [name.replace("_", "-") for name in names]
            known = {p.name for p in self.phases}
            unknown = [n for n in names if n not in known]
            if unknown:
                raise ValueError(f"unknown phase {', '.join(unknown)}; {self.kind} has {', '.join(sorted(known))}")
            return [p for p in self.phases if p.name in names]
        return [p for p in self.phases if p.default or (include_optional and not p.named_only)]

    def validate_url(self, url: str) -> str:
        """The URL, or ValueError naming what is wrong with it for this kind."""
        url = url.strip()
        if not self.url_schemes:
            host, sep, port = url.rpartition(":")
            if "://" in url or not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{self.kind} targets are HOST:PORT, e.g. {self.url_example or '127.0.0.1:50051'}")
            return url
        parts = urlsplit(url)
        if parts.scheme not in self.url_schemes:
            schemes = " or ".join(f"{s}://" for s in self.url_schemes)
            raise ValueError(f"{self.kind} targets use {schemes}, got {url!r}")
        try:
            port_number = parts.port
        except ValueError as exc:
            raise ValueError(f"bad port in {url!r}") from exc
        if not parts.hostname or port_number == 0:
            raise ValueError(f"{url!r} names no host")
        return url

    def host_port(self, url: str) -> tuple[str, int | None]:
        """The host and port a run would connect to, for network allow-lists."""
        if not self.url_schemes:
            host, _, port = url.strip().rpartition(":")
            return host.strip("[]"), int(port)
        parts = urlsplit(url.strip())
        default = {"ws": 80, "http": 80, "wss": 443, "https": 443}.get(parts.scheme)
        return parts.hostname or "", parts.port or default

    def parse_options(self, values: dict[str, Any] | None) -> SuiteOptions:
        return self.options_model.model_validate(values or {})


async def run_suite(
    suite: Suite,
    url: str,
    options: SuiteOptions | dict[str, Any] | None = None,
    phases: Sequence[str] | None = None,
    sink: Sink | None = None,
    include_optional: bool = False,
    finished: Collection[str] = (),
) -> Report:
    """Run the selected phases in order and return the report.

    Clauses of phases that were not selected are recorded as `skip`. A phase
    that overruns its deadline or raises has its undecided clauses recorded as
    `error`. Once the target is unreachable the remaining phases are `error`.
    Phases named in `finished` (done by an earlier attempt of a resumed run)
    are neither run nor recorded again.
    """
    if not isinstance(options, SuiteOptions):
        options = suite.parse_options(options)
    url = suite.validate_url(url)
    report = Report(suite.catalogue, sink)
    selected = suite.select(phases, include_optional)
    state = suite.new_state()
    unreachable: str | None = None
    for phase in suite.phases:
        if phase.name in finished:
            continue
        report.begin_phase(phase.name)
        if phase not in selected:
            for clause_id in phase.clauses:
                report.skip(clause_id, "phase not selected")
        elif unreachable is not None:
            for clause_id in phase.clauses:
                report.error(clause_id, f"not run: {unreachable}")
        else:
            unreachable = await _run_phase(phase, PhaseContext(url, options, report, state))
        report.end_phase()
    return report


async def _run_phase(phase: Phase, ctx: PhaseContext[Any, Any]) -> str | None:
    """Run one phase under its deadline; return why the target is unreachable, if it is."""
    report = ctx.report
    deadline = phase.deadline(ctx.options)
    try:
        await asyncio.wait_for(phase.run(ctx), timeout=deadline)
    except TargetUnreachable as exc:
        why = f"target unreachable: {truncate(exc.reason, 200)}"
        report.error_undecided(phase.clauses, why, exc.evidence)
        return why
    except PhaseStopped as stop:
        report.error_undecided(phase.clauses, f"not exercised: {truncate(stop.reason, 300)}", stop.evidence)
    except TimeoutError:
        report.error_undecided(phase.clauses, f"not exercised: the phase overran its deadline of {deadline:.1f}s")
    except Exception as exc:  # a harness bug must cost one phase, not the run
        report.error_undecided(phase.clauses, f"harness error: {type(exc).__name__}: {truncate(str(exc), 200)}")
    return None


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (`fraction` in 0..1), or NaN for no values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] if ordered else math.nan


def seconds(value: float) -> str:
    """A duration for people: 0.8 ms, 12 ms, 1.4 s."""
    if math.isnan(value):
        return "n/a"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
