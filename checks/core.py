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
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

import pydantic

from checks.errors import NoReply as NoReply
from checks.errors import PhaseStopped as PhaseStopped
from checks.errors import TargetUnreachable as TargetUnreachable

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
        self.announcements: list[tuple[str, str]] = []

    def announce(self, url: str, message: str) -> None:
        """Tell whoever watches the run something they must act on (listen mode: connect a client to `url`)."""
        self.announcements.append((url, message))
        if isinstance(self.sink, Announcer):
            self.sink.announce(url, message)

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


# ---------------------------------------------------------------- suites


class SuiteOptions(pydantic.BaseModel):
    """Options every suite has. Suites subclass this; fields are validated and documented."""

    model_config = pydantic.ConfigDict(extra="forbid")

    timeout: float = pydantic.Field(10.0, gt=0, le=600, description="Deadline in seconds for each step of a phase.")


OptionsT = TypeVar("OptionsT", bound=SuiteOptions)
StateT = TypeVar("StateT")


class PhaseContext(Generic[OptionsT, StateT]):
    """What a phase function gets: the target, the validated options, the report,
    and `state`, what this run has learned so far (one object per run, shared by its phases)."""

    def __init__(self, url: str, options: OptionsT, report: Report, state: StateT, listener: Any = None) -> None:
        self.url = url
        self.options = options
        self.report = report
        self.state = state
        self.timeout = options.timeout
        # Listen-mode suites: the bound Listener (checks.listen) their phases accept clients from.
        self.listener = listener


PhaseFunction = Callable[[PhaseContext[Any, Any]], Awaitable[None]]


class Listener(Protocol):
    """Where a listen-mode run waits for the client it grades (checks.listen implements it)."""

    @property
    def url(self) -> str: ...

    async def wait_for_client(self) -> bool: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class ListenPolicy:
    """Where listen-mode runs may bind, and whom they accept: the service's settings, or the CLI's."""

    host: str = "127.0.0.1"
    ports: tuple[int, ...] = (0,)  # tried in order; 0 takes any free port
    allow: Callable[[str], bool] | None = None  # the client's source address -> accepted?


ListenerFactory = Callable[[Any, ListenPolicy], Awaitable[Listener]]


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
    # Listen-mode suites grade a client: the run binds, announces its URL and waits for the client.
    listener: ListenerFactory | None = None
    # Listen-mode suites: the `rlconform reference-client KIND` that conforms, for the command a run page offers.
    reference_client: str = ""

    @property
    def listen(self) -> bool:
        return self.listener is not None

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
        if self.listen and not url:
            return ""
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
    listen: ListenPolicy | None = None,
    finished: Collection[str] = (),
) -> Report:
    """Run the selected phases in order and return the report.

    Clauses of phases that were not selected are recorded as `skip`. A phase
    that overruns its deadline or raises has its undecided clauses recorded as
    `error`; a clause a phase declares but returned without deciding is `info`
    "not judged", with why.
    Once the target is unreachable the remaining phases are `error`.
    A listen-mode suite first binds (by `listen`), announces its URL and waits
    for a client; none within the deadline is `error` "no client connected".
    Phases named in `finished` (done by an earlier attempt of a resumed run)
    are neither run nor recorded again.
    """
    if not isinstance(options, SuiteOptions):
        options = suite.parse_options(options)
    url = suite.validate_url(url)
    report = Report(suite.catalogue, sink)
    if suite.listener is None:
        return await _run_phases(suite, url, options, report, phases, include_optional, None, finished)
    listener = await suite.listener(options, listen or ListenPolicy())
    try:
        report.announce(listener.url, f"waiting for a client at {listener.url}")
        return await _run_phases(suite, listener.url, options, report, phases, include_optional, listener, finished)
    finally:
        await listener.close()


async def _run_phases(
    suite: Suite,
    url: str,
    options: SuiteOptions,
    report: Report,
    phases: Sequence[str] | None,
    include_optional: bool,
    listener: Listener | None,
    finished: Collection[str],
) -> Report:
    selected = suite.select(phases, include_optional)
    state = suite.new_state()
    unreachable: str | None = None
    if listener is not None and not await listener.wait_for_client():
        unreachable = "no client connected"
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
            unreachable = await _run_phase(phase, PhaseContext(url, options, report, state, listener))
            later = {clause_id for p in selected[selected.index(phase) + 1 :] for clause_id in p.clauses}
            _settle_undecided(report, phase, later)
        report.end_phase()
    return report


def _settle_undecided(report: Report, phase: Phase, later: set[str]) -> None:
    """A clause the phase declares, that no phase decided and no `later` phase may, must not stay pending.

    A phase returns early on purpose: after a failure what it left assumes what
    did not hold, and without one the target lacks what the clause needs (an
    optional feature). Either way the clause is `info` "not judged", with why;
    a phase that could not go on raises PhaseStopped instead.
    """
    decided = {clause_id for _, clause_id in report.results}
    undecided = [clause_id for clause_id in phase.clauses if clause_id not in decided and clause_id not in later]
    if not undecided:
        return
    failed = [r.clause_id for (name, _), r in report.results.items() if name == phase.name and r.verdict in _MISSES]
    why = f"{', '.join(failed[:3])} failed earlier in this phase" if failed else f"{phase.name} did not reach it"
    for clause_id in undecided:
        report.info(clause_id, actual=f"not judged: {why}")


_MISSES = (Verdict.FAIL, Verdict.WARN)


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
