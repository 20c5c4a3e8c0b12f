"""Tap runs in the database: tap targets, and each window of a tap's traffic stored as a run.

A window being watched is a `running` run whose `TapWindow` row holds the counters as last written
(every few seconds, never per message). When the window closes (it rolled over, or the tap stopped)
its clauses become the run's `ClauseResultRow`s of phase `tap` and the run ends with the window's
outcome, so history, diffs and flaky marks read a tap like any run. Both a tap the service hosts
(`app.tap_host`) and a standalone `rlconform tap --post` write through here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud, leases, retention
from app.listening import answered
from app.models import ClauseResultRow, Run, RunStatus, Target, TargetCreate, stored_id, utcnow
from app.models_clause import message_id
from app.models_tap import TAP_PHASE, LedgerDoc, TapSettings, TapTarget, TapTargetCreate, TapWindow, TapWindowPost
from app.redaction import redact_url
from app.tap_settings import spec_for as spec_for  # re-exported: the tap host asks tap_runs for a tap's spec
from checks.core import HARNESS_VERSION, Gate, Outcome, truncate
from checks.listen import split_host_port
from checks.registry import find_suite

TAP_TRIGGER = "tap"
EVIDENCE_CHARS = 2000  # of a violation's expected / actual, as stored in a clause result


def tap_kind(kind: str) -> str:
    """The registry's name of the kind a tap of `kind` (a full or short name) watches; ValueError without a tap."""
    from checks.tap.kinds import tapped_kind

    return tapped_kind(kind)


def target_tap(session: Session, target: Target) -> TapTarget | None:
    return session.get(TapTarget, target.id) if target.id is not None else None


def run_window(session: Session, run: Run) -> TapWindow | None:
    return session.get(TapWindow, run.id) if run.id is not None else None


def _invalid(loc: Sequence[str | int], msg: str) -> crud.TargetInvalid:
    return crud.TargetInvalid([{"loc": list(loc), "msg": msg}])


def create_tap_target(
    session: Session, data: TapTargetCreate, allowed_networks: Sequence[str]
) -> tuple[Target, TapTarget]:
    """Validate and store a target that is a tap of `data.upstream`; TargetInvalid with field paths."""
    from checks.tap.kinds import tap_spec

    try:
        kind = tap_kind(data.kind)
        tap_spec(kind, data.tap.options)
    except ValueError as exc:
        raise _invalid(["tap", "options"] if data.tap.options else ["kind"], str(exc)) from None
    if data.tap.listen:
        try:
            split_host_port(data.tap.listen)
        except ValueError as exc:
            raise _invalid(["tap", "listen"], str(exc)) from None
    created = TargetCreate(
        name=data.name, kind=kind, url=data.upstream, description=data.description, worker_label=data.worker_label
    )
    try:
        target = crud.create_target(session, created, allowed_networks)
    except crud.TargetInvalid as exc:  # the target's `url` is this form's `upstream`
        renamed = [
            {**e, "loc": ["upstream" if part == "url" else part for part in e.get("loc", [])]} for e in exc.errors
        ]
        raise crud.TargetInvalid(renamed) from None
    tap = TapTarget(
        target_id=stored_id(target),
        listen=data.tap.listen,
        roll_seconds=data.tap.roll_seconds,
        roll_messages=data.tap.roll_messages,
        tap_options=dict(data.tap.options),
    )
    session.add(tap)
    session.commit()
    session.refresh(tap)
    session.refresh(target)
    return target, tap


def tap_settings(tap: TapTarget) -> TapSettings:
    return TapSettings(
        listen=tap.listen, roll_seconds=tap.roll_seconds, roll_messages=tap.roll_messages, options=tap.tap_options
    )


# ---------------------------------------------------------------- windows


def _counts(ledger: LedgerDoc) -> dict[str, int]:
    return dict(Counter(clause.verdict for clause in ledger.clauses if clause.verdict != "skip"))


def _outcome(ledger: LedgerDoc, gate: Gate) -> Outcome:
    from checks.core import Verdict, outcome_of

    verdicts = [(clause.clause_id, Verdict(clause.verdict)) for clause in ledger.clauses]
    return outcome_of(verdicts, gate)


def _result_rows(session: Session, run_id: int, ledger: LedgerDoc) -> list[ClauseResultRow]:
    """The window's clauses as clause results: a violated clause carries its first violation's evidence."""
    rows = []
    for clause in ledger.clauses:
        first = clause.first_violation
        if first is not None:
            expected, actual = first.expected, f"{first.actual} (first of {clause.violated} violations)"
        else:
            expected, actual = "", clause.note or f"judged {clause.judged} messages"
        rows.append(
            ClauseResultRow(
                run_id=run_id,
                phase=TAP_PHASE,
                clause_id=clause.clause_id,
                level=clause.level,
                verdict=clause.verdict,
                message_id=message_id(session, truncate(expected, EVIDENCE_CHARS), truncate(actual, EVIDENCE_CHARS)),
                checks=max(1, clause.judged),
            )
        )
    return rows


def _summary(ledger: LedgerDoc) -> str:
    failing = [c.clause_id for c in ledger.clauses if c.violated]
    text = f"{ledger.messages} messages, {ledger.judged_messages} judged, {ledger.unjudged_messages} unjudged"
    return text + (f"; violated: {', '.join(failing[:10])}" if failing else "")


def write_live(session: Session, run: Run, window: TapWindow, ledger: LedgerDoc, rate: float) -> None:
    """The open window's counters as they are now (the run stays `running`)."""
    window.ledger = ledger.model_dump(mode="json")
    window.messages_per_second = round(rate, 2)
    if ledger.forward_p50_ms is not None:  # a closed window's final ledger has none: keep the last measured
        window.added_latency_ms = ledger.forward_p50_ms
    window.unjudged = ledger.unjudged_messages
    window.updated_at = utcnow()
    run.counts = _counts(ledger)
    run.decided_clauses = sum(run.counts.values())
    run.total_clauses = len(ledger.clauses)
    run.message = _summary(ledger)
    session.add_all([window, run])


def close_window(session: Session, run: Run, window: TapWindow, ledger: LedgerDoc, rate: float) -> None:
    """End the window's run with its clauses and outcome (call inside the transaction that commits it)."""
    write_live(session, run, window, ledger, rate)
    window.closed = True
    session.add_all(_result_rows(session, stored_id(run), ledger))
    run.status, run.outcome = RunStatus.FINISHED, _outcome(ledger, run.gate)
    run.finished_at, run.lease_until, run.current_phase = utcnow(), None, None
    session.add(run)


def new_window_run(session: Session, target: Target, *, like: Run | None, opened: datetime) -> Run:
    """A `running` run for a window that opened at `opened`, configured like `like` (else like the target)."""
    suite = find_suite(target.kind)
    run = Run(
        target_id=stored_id(target),
        status=RunStatus.RUNNING,
        kind=target.kind,
        url=like.url if like else redact_url(target.url),
        gate=like.gate if like else Gate(target.gate),
        harness_version=HARNESS_VERSION,
        spec_version=like.spec_version if like else (suite.spec_version if suite else ""),
        trigger=TAP_TRIGGER,
        worker_label=target.worker_label,
        created_at=opened,
        started_at=opened,
        current_phase=TAP_PHASE,
        options=like.options if like else {},
    )
    session.add(run)
    session.flush()
    return run


# Runs kept per target, and clean passing ones keeping whole transcripts: `app.retention`'s settings.
Retention = tuple[int, int]


def roll_hosted(
    engine: Engine, run_id: int, attempt: int, closed: dict[str, Any], rate: float, keep: Retention
) -> bool:
    """A hosted tap's window closed: store it as a finished run of its own; the hosting run watches the next.

    The hosting run keeps its lease, so it is cancelled and recovered like any run; its `created_at`
    moves to the new window's opening so that history lists the windows in order. False when this
    attempt no longer holds the run.
    """
    ledger = LedgerDoc.model_validate(closed)
    with Session(engine) as session:
        run = session.get(Run, run_id)
        window = session.get(TapWindow, run_id)
        target = session.get(Target, run.target_id) if run is not None else None
        if run is None or window is None or target is None or not leases.holds(session, run_id, attempt):
            return False
        now = utcnow()
        finished = new_window_run(session, target, like=run, opened=run.created_at)
        finished_window = TapWindow(
            run_id=stored_id(finished), session_id=window.session_id, number=window.number, listen_url=window.listen_url
        )
        close_window(session, finished, finished_window, ledger, rate)
        window.number += 1
        run.created_at = run.started_at = now
        write_live(session, run, window, LedgerDoc(), 0.0)
        session.flush()
        retention.apply_to_target(session, stored_id(target), *keep)
        session.commit()
        return True


def flush_hosted(engine: Engine, run_id: int, attempt: int, live: dict[str, Any], rate: float, final: bool) -> bool:
    """Write a hosted tap's open window (`final`: it closed as the tap stopped); False without the lease."""
    ledger = LedgerDoc.model_validate(live)
    with Session(engine) as session:
        run = session.get(Run, run_id)
        window = session.get(TapWindow, run_id)
        if run is None or window is None or not leases.holds(session, run_id, attempt):
            return False
        if final:
            window.closed = True
            session.add_all(_result_rows(session, run_id, ledger))
            run.announcement = answered(run.announcement) if run.announcement else None  # nobody connects now
        write_live(session, run, window, ledger, rate)
        session.commit()
        return True


def open_hosted(engine: Engine, run_id: int, attempt: int, listen_url: str, announcement: dict[str, Any]) -> bool:
    """The hosted tap listens: its window row and the run's announcement of where clients connect."""
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is None or not leases.holds(session, run_id, attempt):
            return False
        window = session.get(TapWindow, run_id) or TapWindow(run_id=run_id, session_id=f"run-{run_id}")
        window.listen_url, window.closed = listen_url, False
        run.announcement, run.current_phase = announcement, TAP_PHASE
        session.add_all([window, run])
        session.commit()
        return True


# ---------------------------------------------------------------- posted by a standalone tap


def receive_window(session: Session, target: Target, post: TapWindowPost, keep: Retention) -> Run:
    """Store one window a standalone tap posted: a new run, or the same run's counters again.

    Posts of one window (session id and number) update its run until one says it closed; later ones
    for a closed window change nothing, so a tap re-sending after an outage stores each window once.
    """
    if tap_kind(post.kind) != target.kind:
        raise _invalid(["body", "kind"], f"{target.name} is a {target.kind} target; this tap watched {post.kind}")
    statement = select(TapWindow).where(TapWindow.session_id == post.session_id, TapWindow.number == post.number)
    window = next((w for w in session.exec(statement) if _run_target(session, w) == target.id), None)
    if window is not None and window.closed:
        run = session.get(Run, window.run_id)
        assert run is not None
        return run
    if window is None:
        opened = utcnow()
        run = new_window_run(session, target, like=None, opened=opened)
        if post.upstream:
            run.url = redact_url(post.upstream)
        window = TapWindow(run_id=stored_id(run), session_id=post.session_id, number=post.number)
    else:
        found = session.get(Run, window.run_id)
        assert found is not None
        run = found
    if post.closed:
        close_window(session, run, window, post.ledger, post.messages_per_second)
    else:
        write_live(session, run, window, post.ledger, post.messages_per_second)
    session.flush()
    if post.closed:
        retention.apply_to_target(session, stored_id(target), *keep)
    session.commit()
    session.refresh(run)
    return run


def _run_target(session: Session, window: TapWindow) -> int | None:
    run = session.get(Run, window.run_id)
    return run.target_id if run is not None else None


def session_windows(session: Session, window: TapWindow) -> list[TapWindow]:
    """Every window of the tap `window` belongs to, in order."""
    statement = select(TapWindow).where(TapWindow.session_id == window.session_id).order_by(col(TapWindow.number))
    return list(session.exec(statement))
