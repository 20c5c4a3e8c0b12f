"""Suites and the run loop: options, phase contexts, phases, suites and `run_suite`.

A suite is an ordered list of phases. A phase is one async function that
drives a target and decides clauses through the `Report` its context carries.
`run_suite` runs the selected phases in order, each under its deadline, turns
a phase that stopped or overran into `error` for what it left undecided, and
closes the run's state (and a listen-mode run's listener) however the run ends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

import pydantic

from checks.errors import PhaseStopped, TargetUnreachable
from checks.evidence import truncate
from checks.report import Catalogue, Report, Sink
from checks.verdicts import Verdict

logger = logging.getLogger(__name__)

# Seconds a suite's `close_state` may take at the end of a run: a close that hangs must not hold the run.
TEARDOWN_DEADLINE = 5.0


class SuiteOptions(pydantic.BaseModel):
    """Options every suite has. Suites subclass this; fields are validated and documented."""

    model_config = pydantic.ConfigDict(extra="forbid")

    timeout: float = pydantic.Field(10.0, gt=0, le=600, description="Deadline in seconds for each step of a phase.")


OptionsT = TypeVar("OptionsT", bound=SuiteOptions)
StateT = TypeVar("StateT")


class Listener(Protocol):
    """Where a listen-mode run waits for the clients it grades (`checks.listen` implements it).

    The run waits for the first client and closes the listener at the end; its
    phases take each connection that arrived off the listener's queue, in order.
    """

    @property
    def url(self) -> str:
        """Where clients connect, as the run announces it."""

    @property
    def served(self) -> int:
        """How many connections phases have taken so far."""

    def pending(self) -> int:
        """How many connections arrived that no phase has taken yet."""

    async def accept(self, timeout: float) -> Any:
        """The next connection (a `checks.listen.Accepted` of the listener's transport); NoReply after `timeout`.

        Typed `Any` because each transport's connection differs and its phases know which they hold.
        """

    async def wait_for_client(self) -> bool:
        """Whether a client connected within the run's connect deadline (its connection stays queued)."""

    async def close(self) -> None:
        """Stop listening and let go of every connection still held."""

    # Told the source address (HOST:PORT) of each connection it admits; the run sets it to `Report.connected`.
    on_connect: Callable[[str], None] | None


class PhaseContext(Generic[OptionsT, StateT]):
    """What a phase function gets: the target, the validated options, the report,
    and `state`, what this run has learned so far (one object per run, shared by its phases)."""

    def __init__(
        self, url: str, options: OptionsT, report: Report, state: StateT, listener: Listener | None = None
    ) -> None:
        self.url = url
        self.options = options
        self.report = report
        self.state = state
        self.timeout = options.timeout
        self._listener = listener

    @property
    def listener(self) -> Listener:
        """The bound listener a listen-mode run's phases accept clients from."""
        if self._listener is None:
            raise RuntimeError("this run does not listen: only a listen-mode suite's phases have a listener")
        return self._listener


PhaseFunction = Callable[[PhaseContext[Any, Any]], Awaitable[None]]


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
    # Whether the phase needs the target's first reply (True for nearly every phase). When a phase tried
    # and the target has not answered anything in the run, one such later phase confirms it under a short
    # deadline and the rest are `error` "not exercised: the same cause as phase X" rather than each
    # waiting out its own deadline. A phase that probes something else (the target's own timers) says False.
    first_exchange: bool = True

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
    # Closes what the per-run state holds open (connections shared by phases), awaited at the end of every run.
    close_state: Callable[[Any], Awaitable[None]] | None = None
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
    listener.on_connect = report.connected
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
    try:
        unreachable: str | None = None
        if listener is not None and not await listener.wait_for_client():
            unreachable = "no client connected"
        silence = _Silence()
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
            elif silence.confirmed and phase.first_exchange:
                for clause_id in phase.clauses:
                    report.error(clause_id, silence.why())
            else:
                short = options.timeout * CONFIRMING_STEPS + 1.0 if silence.first and phase.first_exchange else None
                ctx = PhaseContext(url, options, report, state, listener)
                unreachable = await _run_phase(phase, ctx, short)
                later = {clause_id for p in selected[selected.index(phase) + 1 :] for clause_id in p.clauses}
                _settle_undecided(report, phase, later)
                if phase.first_exchange:
                    silence.after(phase.name, report)
            report.end_phase()
    finally:
        await _close_state(suite, state, report)
    return report


# Step timeouts the confirming attempt of a shared cause may take (plus a second).
CONFIRMING_STEPS = 2


class _Silence:
    """Whether the target has stayed silent through the phases that tried an exchange with it.

    The first such phase names the cause; the next one, run under a short deadline, confirms
    it; once confirmed, later phases needing the first exchange are not run. Any reply of the
    target in the run clears it: then each phase stands on its own.
    """

    def __init__(self) -> None:
        self.first: str | None = None
        self.confirmed = False

    def after(self, phase: str, report: Report) -> None:
        if _target_answered(report):
            self.first, self.confirmed = None, False
        elif any(t.phase == phase for t in report.transcripts.values()):  # it tried, and nothing came back
            if self.first is None:
                self.first = phase
            else:
                self.confirmed = True

    def why(self) -> str:
        return f"not exercised: the same cause as phase {self.first} (the target has replied to nothing in this run)"


def _target_answered(report: Report) -> bool:
    """Whether the target replied to anything: a frame received on a connection after one was sent on it.

    What a target sends unasked (a greeting such as PlugRL's metadata, or a flood) is no reply: a target
    that greets and then never answers a request stays silent in this sense.
    """
    for transcript in report.transcripts.values():
        sent = False
        for frame in transcript.frames:
            if frame.direction == "sent":
                sent = True
            elif sent and frame.direction == "received":
                return True
    return False


async def _close_state(suite: Suite, state: Any, report: Report) -> None:
    """Await the suite's `close_state` however the run ended (done, failed, cancelled).

    Shielded, so a second cancellation does not cut the close short (it goes on
    in its own task), and bounded by TEARDOWN_DEADLINE. Transcripts the close
    adds to (the close frame of a shared connection) go to the sink again, so
    the close is on record.
    """
    if suite.close_state is None:
        return
    before = {transcript.id: transcript.progress() for transcript in report.transcripts.values()}
    closing = asyncio.ensure_future(asyncio.wait_for(suite.close_state(state), timeout=TEARDOWN_DEADLINE))
    try:
        await asyncio.shield(closing)
    except Exception:  # a close that fails or hangs must not cost the run its report; no verdict depends on it
        logger.warning("closing the %s run's state failed", suite.kind, exc_info=True)
    finally:
        for transcript in report.transcripts.values():
            if before.get(transcript.id) != transcript.progress():
                report.sink.transcript(transcript)


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


async def _run_phase(phase: Phase, ctx: PhaseContext[Any, Any], short: float | None = None) -> str | None:
    """Run one phase under its deadline (or the `short` one of a confirming attempt, when shorter);
    return why the target is unreachable, if it is."""
    report = ctx.report
    deadline = min(phase.deadline(ctx.options), short or float("inf"))
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
