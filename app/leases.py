"""Execution leases in the runs table: who may execute a run, until when, and what happens when it lapses.

Claiming a queued run makes its next attempt the holder of a lease that the
executor renews while it works. Every write of that attempt is fenced on
(status running, attempt number), so a holder whose lease lapsed (a stalled
or partitioned worker) can write nothing more once another attempt claimed
the run. Recovery re-queues runs whose lease expired, at most `max_attempts`
times, then ends them `interrupted` with their decided clauses kept.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.errors import ServiceError
from app.models import Run, RunAttempt, RunStatus, utcnow

log = logging.getLogger("rlconform.leases")

UNLEASED_MESSAGE = "the service stopped while this run was running; decided clauses are kept"
LEASE_EXPIRED_MESSAGE = "its worker stopped renewing the lease {attempts} time(s); decided clauses are kept"

# Called inside the transaction that puts a run back in the queue, so the re-queue and its job are atomic.
Requeue = Callable[[Session, Run], None]


class LeaseLost(ServiceError):
    """This attempt no longer holds the run (its lease expired and another attempt took over, or it ended)."""


class Ending(enum.StrEnum):
    """How a run that was stopped before its end is recorded (and the ending of its attempt)."""

    CANCELLED = "cancelled"  # someone asked: decided clauses are kept
    INTERRUPTED = "interrupted"  # the process is going away and nobody will resume it
    HANDED_BACK = "handed back"  # a draining worker returns it to the queue; another attempt resumes it


def claim(engine: Engine, run_id: int, worker: str, lease_seconds: float) -> int | None:
    """Take a queued run for a new attempt; returns the attempt number, or None when it is not queued."""
    now = utcnow()
    with Session(engine) as session:
        run = session.exec(select(Run).where(Run.id == run_id).with_for_update()).first()
        if run is None or run.status != RunStatus.QUEUED:
            return None
        attempt = run.attempts + 1
        run.status, run.attempts, run.worker = RunStatus.RUNNING, attempt, worker[:200]
        run.lease_until = now + timedelta(seconds=lease_seconds)
        run.started_at = run.started_at or now
        session.add(run)
        session.add(RunAttempt(run_id=run_id, number=attempt, worker=worker[:200], started_at=now))
        session.commit()
        return attempt


def claim_next(engine: Engine, worker: str, lease_seconds: float, limit: int) -> list[tuple[int, int]]:
    """Claim up to `limit` queued runs, oldest first (the embedded executor); (run id, attempt) pairs."""
    with Session(engine) as session:
        queued = session.exec(
            select(col(Run.id)).where(Run.status == RunStatus.QUEUED).order_by(col(Run.id)).limit(limit)
        ).all()
    claimed = []
    for run_id in queued:
        attempt = claim(engine, run_id, worker, lease_seconds) if run_id is not None else None
        if run_id is not None and attempt is not None:
            claimed.append((run_id, attempt))
    return claimed


def holds(session: Session, run_id: int, attempt: int) -> bool:
    """Whether `attempt` still holds the run, locking its row for the rest of the transaction."""
    result = session.exec(
        update(Run)
        .where(col(Run.id) == run_id, col(Run.status) == RunStatus.RUNNING, col(Run.attempts) == attempt)
        .values(attempts=attempt)
    )
    return result.rowcount == 1


def renew(engine: Engine, run_id: int, attempt: int, lease_seconds: float) -> bool:
    """Extend the lease; False when this attempt lost the run."""
    with Session(engine) as session:
        result = session.exec(
            update(Run)
            .where(col(Run.id) == run_id, col(Run.status) == RunStatus.RUNNING, col(Run.attempts) == attempt)
            .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
        )
        session.commit()
        return result.rowcount == 1


def end_attempt(session: Session, run_id: int, attempt: int, ending: str) -> None:
    session.exec(
        update(RunAttempt)
        .where(col(RunAttempt.run_id) == run_id, col(RunAttempt.number) == attempt, col(RunAttempt.ended_at).is_(None))
        .values(ended_at=utcnow(), ending=ending[:32])
    )


async def keep_renewed(
    engine: Engine,
    run_id: int,
    attempt: int,
    lease_seconds: float,
    lost: asyncio.Event,
    holder: asyncio.Task[Any] | None,
) -> None:
    """Renew the attempt's lease every third of its length; once it is lost, set `lost` and cancel `holder`."""
    while True:
        await asyncio.sleep(lease_seconds / 3)
        try:
            held = await asyncio.to_thread(renew, engine, run_id, attempt, lease_seconds)
        except Exception:  # a database hiccup: try again before the lease runs out
            log.exception("renewing the lease of run %s failed", run_id)
            continue
        if not held:
            log.warning("run %s: attempt %d lost its lease; stopping it", run_id, attempt)
            lost.set()
            if holder is not None:
                holder.cancel()
            return


def hand_back(engine: Engine, run_id: int, attempt: int, requeue: Requeue | None) -> None:
    """Return a run the attempt still holds to the queue (a draining worker's); another attempt resumes it."""
    with Session(engine) as session:
        if not holds(session, run_id, attempt):
            return
        run = session.get(Run, run_id)
        if run is None:
            return
        end_attempt(session, run_id, attempt, str(Ending.HANDED_BACK))
        put_back(session, run, requeue)
        session.commit()


def put_back(session: Session, run: Run, requeue: Requeue | None) -> None:
    """Return a running run to the queue (lease cleared); `requeue` hands it to whoever executes queued runs."""
    run.status, run.lease_until, run.worker, run.current_phase = RunStatus.QUEUED, None, None, None
    session.add(run)
    session.flush()
    if requeue is not None:
        requeue(session, run)


def recover_expired(engine: Engine, max_attempts: int, requeue: Requeue | None, now: datetime | None = None) -> int:
    """Re-queue (or, past `max_attempts`, interrupt) every running run whose lease expired; returns how many.

    A run left running with no lease at all was started by an embedded
    executor (or before leases existed): nobody resumes it, it is interrupted.
    A queued run with no job (queued while runs were executed in-process)
    gets one, so switching to workers loses no queued run.
    """
    now = now or utcnow()
    handled = 0
    with Session(engine) as session:
        unleased = session.exec(
            update(Run)
            .where(col(Run.status) == RunStatus.RUNNING, col(Run.lease_until).is_(None))
            .values(status=RunStatus.INTERRUPTED, finished_at=now, current_phase=None, message=UNLEASED_MESSAGE)
        )
        handled += unleased.rowcount or 0
        if requeue is not None:
            orphans = session.exec(
                select(Run)
                .where(Run.status == RunStatus.QUEUED, col(Run.job_id).is_(None))
                .with_for_update(skip_locked=True)
            ).all()
            for run in orphans:
                requeue(session, run)
            handled += len(orphans)
        expired = session.exec(
            select(Run)
            .where(Run.status == RunStatus.RUNNING, col(Run.lease_until).is_not(None), col(Run.lease_until) < now)
            .with_for_update(skip_locked=True)
        ).all()
        for run in expired:
            end_attempt(session, run.id or 0, run.attempts, "lease expired")
            if run.attempts >= max_attempts:
                run.status, run.finished_at, run.current_phase = RunStatus.INTERRUPTED, now, None
                run.lease_until = None
                run.message = LEASE_EXPIRED_MESSAGE.format(attempts=run.attempts)
                session.add(run)
                log.warning("run %s interrupted after %d attempts", run.id, run.attempts)
            else:
                put_back(session, run, requeue)
                log.warning("run %s re-queued: the lease of attempt %d expired", run.id, run.attempts)
            handled += 1
        session.commit()
    return handled
