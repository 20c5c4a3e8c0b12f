"""Parity runs in the service: queued and executed like any run, their evidence kept, goldens saved from them.

A parity run is an ordinary `Run` of its first target (so it goes to that
target's worker label, is claimed under a lease and cancelled like any run)
plus a `ParityRun` row naming the other side: a second target of the same kind
or a stored golden. `app.executor.Executor` hands such runs to `execute_parity`,
which records both sides with the kind's parity script, compares them, and
keeps the result, both recordings (for saving a golden) and every transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pydantic
from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud, leases
from app.models import Golden, ParityRun, Run, RunStatus, Target, TranscriptRow, stored_id
from app.netpolicy import Reach
from app.recording import transcript_row
from app.redaction import REDACTED, redact_url, scrub, secret_fields, secret_values, url_secrets
from checks.core import HARNESS_VERSION, Gate, Outcome, truncate
from checks.parity.encoding import BadEncoding
from checks.parity.recording import Recording, recording_from_golden
from checks.parity.script import ParityOptions, ParityResult, ParityScript, Status, run_parity
from checks.parity.scripts import find_script
from checks.parity.scripts import parity_kinds as script_kinds
from checks.pinning import pinned
from checks.registry import find_suite

OUTCOMES = {Status.IDENTICAL: Outcome.PASS, Status.DIVERGENT: Outcome.FAIL, Status.UNDECIDED: Outcome.ERROR}
SIDES = ("A", "B")  # the transcripts' phase names: A is the first target, B the second
GOLDEN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # fullmatch: `$` would admit "name\n"

End = Callable[[RunStatus, Outcome | None, str], Awaitable[None]]  # records the run's status, outcome and message
# A parity run's row, and its other side: the second target or the golden recording, or why neither is there.
OtherSide = tuple[ParityRun, Target | None, Recording | None, str]


def _invalid(loc: Sequence[str | int], msg: str) -> crud.TargetInvalid:
    return crud.TargetInvalid([{"loc": list(loc), "msg": msg}])


def parity_kinds() -> list[str]:
    """The kinds with a parity script that loads on this machine."""
    return [kind for kind in script_kinds() if find_script(kind) is not None]


def label_warning(first: Target, second: Target | None) -> str | None:
    """Why the second target may be out of reach: the run executes where the first target's runs do."""
    if second is None or second.worker_label == first.worker_label:
        return None
    return (
        f"the run executes on workers labelled {first.worker_label!r} (the first target's); "
        f"{second.name} is labelled {second.worker_label!r} and may not be reachable from there"
    )


# ---------------------------------------------------------------- options


def _script_values(script: ParityScript, target: Target, overrides: dict[str, Any]) -> dict[str, Any]:
    """The script's options: those it shares with the first target's suite options, then the overrides."""
    shared = {name: value for name, value in target.options.items() if name in script.options_model.model_fields}
    return shared | overrides


def _redacted(script: ParityScript, options: ParityOptions) -> dict[str, Any]:
    snapshot = options.model_dump(mode="json")
    for name in secret_fields(script.options_model):
        if snapshot.get(name) not in (None, ""):
            snapshot[name] = REDACTED
    return snapshot


def run_script_options(script: ParityScript, run: Run, target: Target) -> ParityOptions:
    """The options one side of a parity run executes with: the run's snapshot, secrets taken from `target`."""
    options: ParityOptions = script.options_model.model_validate(crud.run_values(script.options_model, run, target))
    return options


# ---------------------------------------------------------------- queueing


def enqueue_parity(
    session: Session,
    first: Target,
    *,
    second: Target | None = None,
    golden: Golden | None = None,
    options: dict[str, Any] | None = None,
    trigger: str = "api",
) -> Run:
    """Queue a parity run of `first` against `second` or `golden` (exactly one); wake the runner afterwards."""
    crud.require_storable({"options": dict(options or {}), "trigger": trigger})
    if (second is None) == (golden is None):
        raise _invalid(["second"], "give either a second target or a golden recording")
    script = find_script(first.kind)
    if script is None:
        having = ", ".join(script_kinds())
        raise _invalid(["first"], f"{first.kind} has no parity script here; kinds with one: {having}")
    other_kind = second.kind if second is not None else golden.kind if golden is not None else ""
    if other_kind != first.kind:
        where = ["second"] if second is not None else ["golden"]
        raise _invalid(where, f"is of kind {other_kind}; {first.name} is {first.kind}: a parity run needs one kind")
    overrides = dict(options or {})
    for name in sorted(secret_fields(script.options_model)):
        if overrides.get(name) not in (None, REDACTED):
            raise _invalid(["options", name], "a secret cannot be set for one run; set it on the first target")
        overrides.pop(name, None)
    try:
        parsed = script.options_model.model_validate(_script_values(script, first, overrides))
    except pydantic.ValidationError as exc:
        raise crud.TargetInvalid(crud._pydantic_errors(exc, ["options"])) from None
    suite = find_suite(first.kind)
    run = Run(
        target_id=stored_id(first),
        kind=first.kind,
        url=redact_url(first.url),
        options=_redacted(script, parsed),
        gate=Gate.DEFAULT,
        harness_version=HARNESS_VERSION,
        spec_version=suite.spec_version if suite is not None else "",
        trigger=trigger[:16],
        worker_label=first.worker_label,
    )
    session.add(run)
    session.flush()
    session.add(
        ParityRun(
            run_id=stored_id(run),
            second_target_id=second.id if second is not None else None,
            second_name=second.name if second is not None else f"golden {golden.name if golden else ''}",
            golden_id=golden.id if golden is not None else None,
            script_version=script.version,
        )
    )
    requeue = session.info.get("requeue")
    if requeue is not None:
        requeue(session, run)  # the parity row is in the same transaction as the job
    session.commit()
    session.refresh(run)
    return run


def parity_of(session: Session, run: Run | int) -> ParityRun | None:
    run_id = run if isinstance(run, int) else run.id
    return session.get(ParityRun, run_id)


# ---------------------------------------------------------------- executing


def _other_side(session: Session, parity: ParityRun) -> tuple[Target | None, Recording | None, str]:
    """The second target or the golden recording, or why neither is there any more."""
    if parity.golden_id is not None:
        golden = session.get(Golden, parity.golden_id)
        if golden is None:
            return None, None, f"the {parity.second_name} was deleted"
        try:
            return None, recording_from_golden(golden.document), ""
        except BadEncoding as exc:
            return None, None, f"the {parity.second_name} cannot be read: {exc}"
    second = session.get(Target, parity.second_target_id) if parity.second_target_id is not None else None
    if second is None:
        return None, None, f"the second target {parity.second_name} was deleted"
    session.expunge(second)
    return second, None, ""


def load_other_side(engine: Engine, run_id: int) -> OtherSide | None:
    """The run's parity row and its other side; None for an ordinary run."""
    with Session(engine) as session:
        parity = session.get(ParityRun, run_id)
        if parity is None:
            return None
        second, golden, missing = _other_side(session, parity)
        session.expunge(parity)
        return parity, second, golden, missing


async def execute_parity(
    engine: Engine, reach: Reach, run: Run, first: Target, attempt: int, loaded: OtherSide, end: End
) -> None:
    """Record both sides, compare, keep everything; called by `Executor` for a claimed parity run."""
    parity, second, golden, missing = loaded
    script, suite = find_script(run.kind), find_suite(run.kind)
    if script is None or suite is None:
        await end(RunStatus.FINISHED, Outcome.ERROR, f"{run.kind} has no parity script on this worker")
        return
    if missing:
        await end(RunStatus.FINISHED, Outcome.ERROR, missing)
        return
    options = run_script_options(script, run, first)
    # Each side sends its own target's credentials, never the first target's to the second server.
    second_options = run_script_options(script, run, second) if second is not None else options
    urls = [crud.run_url(run, first)] + ([second.url] if second is not None else [])
    secrets = [secret for url in urls for secret in url_secrets(url)]
    for side in (options, second_options):
        secrets += secret_values(script.options_model, side)
    with contextlib.ExitStack() as pins:
        for url in urls:  # each side connects to the address checked against the network policy
            host, port = suite.host_port(url)
            pins.enter_context(pinned(host, await reach.checked_address(host, port)))
        second_url = urls[1] if len(urls) > 1 else None
        result = await run_parity(script, options, urls[0], second_url, golden, right_options=second_options)
    await asyncio.to_thread(_keep, engine, stored_id(run), attempt, parity, result, secrets)
    await end(RunStatus.FINISHED, OUTCOMES[result.status], result.reason)


def _keep(
    engine: Engine, run_id: int, attempt: int, parity: ParityRun, result: ParityResult, secrets: list[str]
) -> None:
    """The comparison, both recordings and every transcript, written only while the attempt holds the run."""
    with Session(engine) as session:
        if not leases.holds(session, run_id, attempt):
            raise leases.LeaseLost(run_id)
        session.exec(delete(TranscriptRow).where(col(TranscriptRow.run_id) == run_id))  # an earlier attempt's
        number = 0
        for side, recording in zip(SIDES, (result.left, result.right), strict=True):
            for transcript in recording.evidence if recording is not None else []:
                number += 1
                data = scrub(transcript.to_dict() | {"id": number, "phase": side}, secrets)
                session.add(transcript_row(session, run_id, data))
        row = session.get(ParityRun, run_id) or parity
        row.verdict = str(result.status)
        row.result = scrub(result.to_dict(), secrets)
        row.recordings = [scrub(r.to_golden(), secrets) if r is not None else None for r in (result.left, result.right)]
        session.add(row)
        session.commit()


# ---------------------------------------------------------------- goldens


def _golden_name_error(session: Session, name: str) -> crud.TargetInvalid | None:
    if not GOLDEN_NAME.fullmatch(name or ""):
        return _invalid(["name"], "use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
    if session.exec(select(Golden.id).where(Golden.name == name)).first() is not None:
        return _invalid(["name"], f"a golden named {name!r} already exists")
    return None


def _store_golden(session: Session, name: str, recording: Recording, document: dict[str, Any], **extra: Any) -> Golden:
    error = _golden_name_error(session, name)
    if error is not None:
        raise error
    golden = Golden(
        name=name,
        kind=recording.kind,
        source=truncate(recording.target, 2000),
        script_version=recording.script_version[:32],
        document=document,
        **extra,
    )
    session.add(golden)
    session.commit()
    session.refresh(golden)
    return golden


def save_golden(session: Session, run: Run, side: int, name: str) -> Golden:
    """Keep side `side` (0: A, 1: B) of a finished parity run as the golden `name`."""
    parity = parity_of(session, run)
    if parity is None:
        raise _invalid(["run_id"], f"run {run.id} is not a parity run")
    if run.status != RunStatus.FINISHED or parity.verdict is None:
        raise _invalid(["run_id"], f"run {run.id} has not finished its comparison")
    if side not in (0, 1):
        raise _invalid(["side"], "side is 0 (A, the first target) or 1 (B)")
    documents = parity.recordings + [None, None]
    document = documents[side]
    if not isinstance(document, dict):
        raise _invalid(["side"], f"side {SIDES[side]} of run {run.id} was not recorded (or is a golden already)")
    if side == 1 and parity.golden_id is not None:
        raise _invalid(["side"], f"side B of run {run.id} is the golden {parity.second_name} itself")
    return _store_golden(session, name, recording_from_golden(document), document, source_run_id=run.id)


def upload_golden(session: Session, name: str, document: Any) -> Golden:
    """Store a golden file (as `rlconform parity --save-golden` writes it) under `name`."""
    try:
        recording = recording_from_golden(document)
    except (BadEncoding, ValueError, TypeError) as exc:
        raise _invalid(["document"], f"not a golden recording: {exc}") from None
    if find_script(recording.kind) is None:
        raise _invalid(["document", "kind"], f"no parity script for {recording.kind!r} here")
    crud.require_storable({"name": name, "document": document})
    return _store_golden(session, name, recording, document)


def goldens(session: Session, kind: str | None = None) -> list[Golden]:
    statement = select(Golden).order_by(col(Golden.created_at).desc(), col(Golden.id).desc())
    if kind is not None:
        statement = statement.where(Golden.kind == kind)
    return list(session.exec(statement))
