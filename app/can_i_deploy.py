"""Can TARGET at VERSION be deployed to ENVIRONMENT? `yes`, `no` or `unknown`, one matrix row per party.

The first row is the target itself at the version asked about; then one row per counterpart deployed in
the environment (its current version and each released one): a target of the other side of the same
protocol (a server kind and its client kind, as the kind records pair them), or a tap target of the same
protocol, which judges both sides' traffic. Each row is decided by that target's latest finished
conformance run at that version (parity runs compare two servers and do not count; a run that could not
decide, outcome `error`, is passed over), with a reason from a closed set:

- `passed`: that run passed;
- `failed`: it failed, naming the clauses it failed (its gate's failing verdicts, expected failures aside);
- `never-checked`: no run of the target decided at that version;
- `version-unknown`: the target's runs name no version at all (none given by CI, none read from the wire),
  so none can be tied to one;
- `older-spec`: runs at that version were all judged by an older spec or harness revision than now.

Any `failed` row answers `no`; else any row not `passed` answers `unknown`; else `yes` (exit 0 / 1 / 2).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, SQLModel, col, select

from app.deployments import deployed
from app.models import ClauseResultRow, ParityRun, Run, RunStatus, Target
from app.models_deploy import RunIdentity
from app.models_tap import TapTarget
from checks.core import HARNESS_VERSION, Gate, Outcome
from checks.registry import RECORDS, find_suite


class Reason(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NEVER_CHECKED = "never-checked"
    VERSION_UNKNOWN = "version-unknown"
    OLDER_SPEC = "older-spec"


class Answer(enum.StrEnum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


EXIT_CODES = {Answer.YES: 0, Answer.NO: 1, Answer.UNKNOWN: 2}
FAILING_SHOWN = 50  # failing clause ids named per row, at most


class MatrixRow(SQLModel):
    """One party of the answer: a target at a version, and what decides it."""

    role: str  # "candidate" (the target asked about) or "counterpart"
    target: str
    kind: str
    version: str
    released: bool = False
    answer: Answer
    reason: Reason
    run_id: int | None = None
    failing: list[str] = []
    detail: str


class DeployAnswer(SQLModel):
    target: str
    version: str
    environment: str
    answer: Answer
    exit_code: int
    rows: list[MatrixRow]
    notes: list[str] = []


# ---------------------------------------------------------------- who talks to whom


def _names(kind: str) -> set[str]:
    record = RECORDS.get(kind)
    return set(record.names()) if record is not None else {kind}


def _is_client(kind: str) -> bool:
    record = RECORDS.get(kind)
    return record is not None and record.has("reference_client")


def same_protocol(kind: str, other: str) -> bool:
    """Two kinds of one protocol: the same kind, or kinds whose records share a name (`plugrl`, `rllink`)."""
    return kind == other or bool(_names(kind) & _names(other))


def counterpart_kinds(kind: str) -> set[str]:
    """The other side of `kind`'s protocol: its client kind for a server kind, and the other way round."""
    return {other for other in RECORDS if same_protocol(kind, other) and _is_client(other) != _is_client(kind)}


def is_counterpart(candidate: Target, other: Target, tap_ids: set[int]) -> bool:
    if other.id == candidate.id:
        return False
    if other.id in tap_ids:  # a tap sees both sides of its protocol's traffic
        return same_protocol(candidate.kind, other.kind)
    return other.kind in counterpart_kinds(candidate.kind)


# ---------------------------------------------------------------- one row


@dataclass(frozen=True)
class Decided:
    reason: Reason
    run_id: int | None
    failing: list[str]
    detail: str


def current_revisions(kind: str) -> tuple[str | None, str]:
    """The spec revision of `kind`'s suite now (None when it cannot be loaded here) and the harness's."""
    suite = find_suite(kind)
    return (suite.spec_version if suite is not None else None), HARNESS_VERSION


def failing_clauses(session: Session, run: Run) -> list[str]:
    failing = [str(v) for v in Gate(run.gate).failing()]
    rows = session.exec(
        select(ClauseResultRow.clause_id)
        .where(ClauseResultRow.run_id == run.id, col(ClauseResultRow.verdict).in_(failing))
        .distinct()
    ).all()
    return sorted(set(rows) - set(run.expected_failures))


def _decided_runs(target: Target) -> Any:  # a select of (Run, its version); sqlmodel types two entities loosely
    """Finished conformance runs of `target`, newest first, with the version each names."""
    return (
        select(Run, RunIdentity.version)
        .outerjoin(RunIdentity, col(RunIdentity.run_id) == Run.id)
        .outerjoin(ParityRun, col(ParityRun.run_id) == Run.id)
        .where(Run.target_id == target.id, Run.status == RunStatus.FINISHED, col(ParityRun.run_id).is_(None))
        .order_by(col(Run.id).desc())
    )


def decide(session: Session, target: Target, version: str) -> Decided:
    """What the latest finished run of `target` at `version` says (see the module's docstring)."""
    spec, harness = current_revisions(target.kind)
    at_version = session.exec(_decided_runs(target).where(RunIdentity.version == version)).all()
    deciding = [run for run, _ in at_version if run.outcome in (Outcome.PASS, Outcome.FAIL)]
    undecided = len(at_version) - len(deciding)
    if not deciding:
        named = session.exec(_decided_runs(target).where(col(RunIdentity.version).is_not(None)).limit(1)).first()
        if named is None and session.exec(_decided_runs(target).limit(1)).first() is not None:
            why = f"no run of {target.name} names a version: give one with `rlconform ci --version`"
            return Decided(Reason.VERSION_UNKNOWN, None, [], why)
        couldnt = f" ({undecided} run(s) at it could not decide)" if undecided else ""
        return Decided(Reason.NEVER_CHECKED, None, [], f"no run of {target.name} decided at {version}{couldnt}")
    current = [run for run in deciding if run.harness_version == harness and spec in (None, run.spec_version)]
    if not current:
        run = deciding[0]
        why = (
            f"run #{run.id} at {version} was judged by spec {run.spec_version}, harness {run.harness_version}; "
            f"now spec {spec}, harness {harness}: run it again"
        )
        return Decided(Reason.OLDER_SPEC, run.id, [], why)
    run = current[0]
    if run.outcome == Outcome.PASS:
        return Decided(Reason.PASSED, run.id, [], f"run #{run.id} passed")
    failing = failing_clauses(session, run)
    shown = ", ".join(failing[:FAILING_SHOWN]) + (" …" if len(failing) > FAILING_SHOWN else "")
    return Decided(Reason.FAILED, run.id, failing[:FAILING_SHOWN], f"run #{run.id} failed: {shown or run.message}")


def _row(session: Session, role: str, target: Target, version: str, released: bool = False) -> MatrixRow:
    decided = decide(session, target, version)
    answer = {Reason.PASSED: Answer.YES, Reason.FAILED: Answer.NO}.get(decided.reason, Answer.UNKNOWN)
    return MatrixRow(
        role=role,
        target=target.name,
        kind=target.kind,
        version=version,
        released=released,
        answer=answer,
        reason=decided.reason,
        run_id=decided.run_id,
        failing=decided.failing,
        detail=decided.detail,
    )


def overall(rows: list[MatrixRow]) -> Answer:
    answers = {row.answer for row in rows}
    if Answer.NO in answers:
        return Answer.NO
    return Answer.UNKNOWN if Answer.UNKNOWN in answers else Answer.YES


def can_i_deploy(session: Session, target: Target, version: str, environment: str) -> DeployAnswer:
    rows = [_row(session, "candidate", target, version)]
    tap_ids = set(session.exec(select(TapTarget.target_id)).all())
    there = deployed(session, environment)
    for deployment, other in there:
        if is_counterpart(target, other, tap_ids):
            rows.append(_row(session, "counterpart", other, deployment.version, deployment.released))
    notes = []
    if not there:
        notes.append(f"nothing is recorded as deployed in {environment}: only {target.name} itself is checked")
    elif len(rows) == 1:
        notes.append(f"no counterpart of {target.name} ({target.kind}) is deployed in {environment}")
    answer = overall(rows)
    return DeployAnswer(
        target=target.name,
        version=version,
        environment=environment,
        answer=answer,
        exit_code=EXIT_CODES[answer],
        rows=rows,
        notes=notes,
    )
