"""What a parity script is, and how a parity run drives it: record each side, compare, decide.

A script sends the same deterministic inputs to whatever target it is given
and returns every observable output as plain values; the engine makes them
canonical, applies the script's projections and compares. A target that could
not be driven to the end gives no recording, and the run cannot decide.
"""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from typing import Any, Protocol

import pydantic

from checks.core import NoReply, PhaseStopped, Report, SuiteOptions, truncate
from checks.errors import CheckError
from checks.parity.compare import Comparison, Divergence, compare
from checks.parity.projections import Projection
from checks.parity.recording import Recording
from checks.parity.values import Map, NotCanonical, Seq, canonical
from checks.registry import find_suite


class NotRecorded(CheckError):
    """A target could not be driven through the whole script."""


class ParityOptions(SuiteOptions):
    """Options every parity script has; a script adds those that shape its inputs."""

    record_timeout: float = pydantic.Field(
        300.0, gt=0, le=3600, description="Seconds one target may take to go through the whole script."
    )


@dataclass
class Observed:
    """What a script returns for one target."""

    values: dict[str, Any]
    unjudgeable: str | None = None  # e.g. the target answered one input two ways
    summary: str = ""


class ParityScript(Protocol):
    kind: str
    version: str
    options_model: type[ParityOptions]
    projections: tuple[Projection, ...]
    # A top-level list whose items are independent units (openai requests): the rate is over them.
    unit: str | None
    # Top-level keys whose divergences come first: what the rest follows from (a server's metadata).
    leading: tuple[str, ...]

    async def observe(self, url: str, options: Any, report: Report) -> Observed: ...

    def inputs(self, options: Any) -> dict[str, Any]: ...

    def allowed_rate(self, options: Any) -> float: ...


class ExactScript:
    """What a script shares when no divergence is allowed: no units to count a rate over, nothing to order
    first, no projections; `recorded_inputs` names the options that decide what is sent, recorded beside
    each side. A script overrides what differs."""

    unit: str | None = None
    leading: tuple[str, ...] = ()
    projections: tuple[Projection, ...] = ()
    recorded_inputs: frozenset[str] = frozenset()

    def inputs(self, options: ParityOptions) -> dict[str, Any]:
        return options.model_dump(include=set(self.recorded_inputs))

    def allowed_rate(self, options: ParityOptions) -> float:
        return 0.0


class Status(enum.StrEnum):
    IDENTICAL = "identical"
    DIVERGENT = "divergent"
    UNDECIDED = "undecided"  # a side not recorded, or not judgeable


EXIT_CODES = {Status.IDENTICAL: 0, Status.DIVERGENT: 1, Status.UNDECIDED: 2}


@dataclass
class ParityResult:
    kind: str
    status: Status
    reason: str
    left: Recording | None
    right: Recording | None
    comparison: Comparison = field(default_factory=Comparison)
    units_total: int = 0
    allowed_rate: float = 0.0
    # The script's unit (openai's "requests"), or None: only its indices count as divergent units.
    unit: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def first(self) -> Divergence | None:
        return self.comparison.first

    @property
    def divergent_units(self) -> int:
        return len(self.comparison.units.get(self.unit, ())) if self.unit else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "status": str(self.status),
            "exit_code": self.exit_code,
            "reason": self.reason,
            "divergence_count": self.comparison.count,
            "first": self.first.to_dict() if self.first else None,
            "divergences": [d.to_dict() for d in self.comparison.divergences],
            "unit": self.unit,
            "units_total": self.units_total,
            "divergent_units": self.divergent_units,
            "allowed_rate": self.allowed_rate,
            "sides": [_side_dict(r) for r in (self.left, self.right)],
        }


def _side_dict(recording: Recording | None) -> dict[str, Any] | None:
    if recording is None:
        return None
    return {
        "target": recording.target,
        "summary": recording.summary,
        "unjudgeable": recording.unjudgeable,
        "recorded_at": recording.recorded_at,
    }


def scratch_report(kind: str) -> Report:
    """A report for the kind's own helpers to write to: a parity run keeps their transcripts, not their verdicts."""
    suite = find_suite(kind)
    if suite is None:
        raise NotRecorded(f"the {kind} suite is unavailable on this machine")
    return Report(suite.catalogue)


async def record(script: ParityScript, url: str, options: Any) -> Recording:
    """Drive one target through the script; raises NotRecorded when it cannot be driven to the end."""
    report = scratch_report(script.kind)
    recording = Recording(script.kind, url, script.version, script.inputs(options))
    try:
        observed = await asyncio.wait_for(script.observe(url, options, report), options.record_timeout)
    except PhaseStopped as exc:
        raise NotRecorded(f"{url}: {truncate(exc.reason, 300)}") from None
    except (TimeoutError, NoReply) as exc:
        raise NotRecorded(f"{url}: no answer in time ({exc or options.record_timeout})") from None
    except OSError as exc:
        raise NotRecorded(f"{url}: {type(exc).__name__}: {truncate(str(exc), 200)}") from None
    finally:
        recording.evidence = list(report.transcripts.values())
    try:
        recording.values = canonical(observed.values)
    except NotCanonical as exc:
        raise NotRecorded(f"{url}: an output has no bit-exact form: {exc}") from None
    recording.unjudgeable, recording.summary = observed.unjudgeable, observed.summary
    return recording


def judge(script: ParityScript, options: Any, left: Recording, right: Recording) -> ParityResult:
    """Compare two recordings of one script and decide."""
    rate = script.allowed_rate(options)
    if (left.kind, left.script_version, left.inputs) != (right.kind, right.script_version, right.inputs):
        why = "the two recordings come from different scripts or inputs"
        detail = " vs ".join(f"{r.kind} v{r.script_version} {r.inputs}" for r in (left, right))
        return ParityResult(script.kind, Status.UNDECIDED, f"{why}: {truncate(detail, 400)}", left, right)
    comparison = compare(left.values, right.values, script.projections, leading=script.leading)
    total = _units_total(script, left)
    result = ParityResult(script.kind, Status.IDENTICAL, "", left, right, comparison, total, rate, script.unit)
    unjudgeable = [f"{r.target}: {r.unjudgeable}" for r in (left, right) if r.unjudgeable]
    if unjudgeable:
        result.status = Status.UNDECIDED
        result.reason = "not judged: " + "; ".join(unjudgeable)
    elif comparison.identical:
        result.reason = "every observed output is identical after the declared projections"
    elif script.unit is not None and total and result.divergent_units / total <= rate:
        result.reason = f"{result.divergent_units} of {total} {script.unit} diverge, within the allowed rate {rate:g}"
    else:
        result.status = Status.DIVERGENT
        where = f" ({result.divergent_units} of {total} {script.unit})" if script.unit and total else ""
        result.reason = f"{comparison.count} divergence(s){where}; the first at {comparison.divergences[0].path}"
    return result


def _units_total(script: ParityScript, recording: Recording) -> int:
    if script.unit is None or not isinstance(recording.values, Map):
        return 0
    units = recording.values.get(script.unit)
    return len(units.items) if isinstance(units, Seq) else 0


async def run_parity(
    script: ParityScript,
    options: Any,
    left_url: str,
    right_url: str | None = None,
    golden: Recording | None = None,
    right_options: Any = None,
) -> ParityResult:
    """Record the left target, then the right one (or take the golden), and judge.

    The targets are driven one after the other, never at once: a shared backend
    behind both must see the same load from each. `right_options` (default: the
    left's) carry the right target's own credentials; the comparison reads `options`.
    """
    try:
        left = await record(script, left_url, options)
    except NotRecorded as exc:
        return ParityResult(script.kind, Status.UNDECIDED, f"could not record {exc}", None, golden)
    if golden is not None:
        return judge(script, options, left, golden)
    if right_url is None:
        return ParityResult(script.kind, Status.UNDECIDED, "no second target and no golden recording", left, None)
    try:
        right = await record(script, right_url, options if right_options is None else right_options)
    except NotRecorded as exc:
        return ParityResult(script.kind, Status.UNDECIDED, f"could not record {exc}", left, None)
    return judge(script, options, left, right)
