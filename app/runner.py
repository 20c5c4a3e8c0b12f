"""Background runs: queued in the database, executed by async workers under a concurrency limit.

Each run calls `checks.core.run_suite` with a `RunRecorder` sink. The
recorder hands every decided clause and transcript to a writer task that
commits it at once (off the event loop), so progress is live and a crash
loses nothing already written. On start-up, runs left `running` by a dead
process become `interrupted` with their decided clauses intact, and queued
runs are picked up again.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud
from app.metrics import Metrics
from app.models import ENDED_STATUSES, ClauseResultRow, Run, RunStatus, Target, TranscriptRow, utcnow
from app.netpolicy import NetworkRefused, check_host_async
from app.textsafe import storable
from checks.core import (
    ClauseResult,
    Outcome,
    RolledUp,
    Suite,
    SuiteOptions,
    Transcript,
    outcome_of,
    roll_up,
    rolled_verdicts,
    root_causes,
    run_suite,
    truncate,
    verdict_counts,
)
from checks.pinning import pinned
from checks.registry import find_suite

log = logging.getLogger("rlconform.runner")

CANCEL_WAIT = 30.0  # seconds a cancel request waits for the run to record its end
INTERRUPTED_MESSAGE = "the service stopped while this run was running; decided clauses are kept"


# ---------------------------------------------------------------- persistence


def _run_counts(session: Session, run_id: int) -> dict[str, int]:
    """Clauses per rolled-up verdict (zeros left out): progress and counts count clauses, not phase results."""
    rows = session.exec(
        select(ClauseResultRow.clause_id, ClauseResultRow.verdict)
        .where(ClauseResultRow.run_id == run_id)
        .order_by(col(ClauseResultRow.id))
    ).all()
    counts = verdict_counts(roll_up(rows, lambda row: (row[0], row[1])))
    return {verdict: n for verdict, n in counts.items() if n}


def scrub(data: Any, secrets: Sequence[str]) -> Any:
    """`data` with every occurrence of a secret value masked, so evidence never stores credentials."""
    if isinstance(data, str):
        for secret in secrets:
            data = data.replace(secret, crud.REDACTED)
        return data
    if isinstance(data, dict):
        return {key: scrub(value, secrets) for key, value in data.items()}
    if isinstance(data, list):
        return [scrub(value, secrets) for value in data]
    return data


def secret_values(suite: Suite, options: SuiteOptions) -> list[str]:
    """The run's secret option values worth scrubbing (very short ones would mask ordinary text)."""
    values = []
    for name in crud.secret_fields(suite.options_model):
        value = getattr(options, name, None)
        secret = value.get_secret_value() if value is not None else ""
        secret = secret.decode(errors="replace") if isinstance(secret, bytes) else secret
        if len(secret) >= 3:
            values.append(secret)
    return values


def _transcript_row(session: Session, run_id: int, data: dict[str, Any]) -> TranscriptRow:
    """The stored row of a transcript (`Transcript.to_dict()`), created or updated."""
    row = session.exec(
        select(TranscriptRow).where(TranscriptRow.run_id == run_id, TranscriptRow.number == data["id"])
    ).first() or TranscriptRow(run_id=run_id, number=data["id"], phase=data["phase"][:64], label="")
    row.label = truncate(data["label"], 400)
    row.frames = data["frames"]
    row.dropped = data["dropped"]
    row.close_code = data["close_code"]
    row.close_reason = data["close_reason"]
    row.closed_by = (data["closed_by"] or None) and data["closed_by"][:16]
    return row


def _result_row(session: Session, run_id: int, data: dict[str, Any]) -> ClauseResultRow:
    """The stored row of a clause result (`ClauseResult.to_dict()`), created or updated."""
    row = session.exec(
        select(ClauseResultRow).where(
            ClauseResultRow.run_id == run_id,
            ClauseResultRow.phase == data["phase"],
            ClauseResultRow.clause_id == data["clause_id"],
        )
    ).first() or ClauseResultRow(
        run_id=run_id, phase=data["phase"], clause_id=data["clause_id"], level=data["level"], verdict=""
    )
    row.level = data["level"]
    row.verdict = data["verdict"]
    row.expected = data["expected"]
    row.actual = data["actual"]
    row.duration = data["duration"]
    row.checks = data["checks"]
    row.transcript_ids = data["transcript_ids"]
    row.decided_at = utcnow()
    return row


def write_batch(
    engine: Engine,
    run_id: int,
    results: Sequence[dict[str, Any]],
    transcripts: Sequence[dict[str, Any]],
    phase: str | None,
    secrets: Sequence[str] = (),
) -> None:
    """Upsert results by (run, phase, clause) and transcripts by (run, number); update progress; commit."""
    if secrets:
        results, transcripts = scrub(list(results), secrets), scrub(list(transcripts), secrets)
    results, transcripts = storable(list(results)), storable(list(transcripts))
    with Session(engine) as session:
        for data in transcripts:
            session.add(_transcript_row(session, run_id, data))
        for data in results:
            session.add(_result_row(session, run_id, data))
        session.flush()
        counts = _run_counts(session, run_id)
        values: dict[str, Any] = {"counts": counts, "decided_clauses": sum(counts.values())}
        if phase is not None:
            values["current_phase"] = phase
        session.exec(update(Run).where(col(Run.id) == run_id, col(Run.status) == RunStatus.RUNNING).values(**values))
        session.commit()


class RunRecorder:
    """A `checks.core.Sink` that persists what a run decides as soon as it is decided.

    Sink calls arrive on the event loop; they snapshot the data and wake a
    writer task that commits in a worker thread. `close()` waits until all
    of it is written.
    """

    def __init__(self, engine: Engine, run_id: int, secrets: Sequence[str] = ()) -> None:
        self.engine = engine
        self.run_id = run_id
        self.secrets = list(secrets)
        self._results: dict[tuple[str, str], dict[str, Any]] = {}
        self._transcripts: dict[int, dict[str, Any]] = {}
        self._phase: str | None = None
        self._dirty = asyncio.Event()
        self._closing = False
        self._writer = asyncio.create_task(self._write_loop(), name=f"run-{run_id}-writer")

    def result(self, result: ClauseResult) -> None:
        self._results[(result.phase, result.clause_id)] = result.to_dict()
        self._dirty.set()

    def transcript(self, transcript: Transcript) -> None:
        self._transcripts[transcript.id] = transcript.to_dict()
        self._dirty.set()

    def phase(self, name: str, state: str) -> None:
        if state == "running":
            self._phase = name
            self._dirty.set()

    async def _write_loop(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            results, self._results = list(self._results.values()), {}
            transcripts, self._transcripts = list(self._transcripts.values()), {}
            phase, self._phase = self._phase, None
            if results or transcripts or phase:
                await asyncio.to_thread(
                    write_batch, self.engine, self.run_id, results, transcripts, phase, self.secrets
                )
            if self._closing and not self._dirty.is_set():
                return

    async def close(self) -> None:
        """Write everything decided so far; raises what the writer raised."""
        self._closing = True
        self._dirty.set()
        await asyncio.shield(self._writer)


def recover_interrupted(engine: Engine) -> int:
    """Mark runs left `running` by a dead process as interrupted; returns how many."""
    with Session(engine) as session:
        result = session.exec(
            update(Run)
            .where(col(Run.status) == RunStatus.RUNNING)
            .values(status=RunStatus.INTERRUPTED, finished_at=utcnow(), current_phase=None, message=INTERRUPTED_MESSAGE)
        )
        session.commit()
        return result.rowcount or 0


# ---------------------------------------------------------------- the runner


class Runner:
    """Claims queued runs and executes up to `max_concurrent` of them at once."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_concurrent: int = 4,
        allowed_networks: Sequence[str] = (),
        retention_runs: int = 500,
        metrics: Metrics | None = None,
        poll_interval: float = 2.0,
    ) -> None:
        self.engine = engine
        self.max_concurrent = max_concurrent
        self.allowed_networks = list(allowed_networks)
        self.retention_runs = retention_runs
        self.metrics = metrics or Metrics()
        self.poll_interval = poll_interval
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._own_endpoints: set[tuple[str, int | None]] = set()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._stopping = False

    # -- lifecycle

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._dispatcher = asyncio.create_task(self._dispatch_loop(), name="runner-dispatcher")

    async def stop(self) -> None:
        """Stop claiming; runs still executing end as `interrupted` with their results kept."""
        self._stopping = True
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def allow_own(self, url: str) -> None:
        """Let runs reach `url`, a server this service runs itself (the demo), whatever the policy says."""
        parsed = urlsplit(url)
        self._own_endpoints.add((parsed.hostname or "", parsed.port))

    def wake(self) -> None:
        """Look for queued runs now. Safe to call from any thread (sync routes run in a pool)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is loop:
            self._wake.set()
        else:
            loop.call_soon_threadsafe(self._wake.set)

    async def cancel(self, run_id: int) -> None:
        """Cancel a queued or running run; decided clauses are kept and the status becomes `cancelled`."""
        task = self.tasks.get(run_id)
        if task is not None:
            task.cancel()
            await asyncio.wait({task}, timeout=CANCEL_WAIT)
            return
        await asyncio.to_thread(self._cancel_in_db, run_id)

    async def delete_target(self, session: Session, target: Target) -> None:
        """Cancel the target's queued and running runs, then delete it with all its runs."""
        for run_id in await asyncio.to_thread(crud.live_run_ids, session, target):
            await self.cancel(run_id)
        await asyncio.to_thread(crud.delete_target, session, target)

    def _cancel_in_db(self, run_id: int) -> None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status in ENDED_STATUSES:
                return
            if crud.cancel_run(session, run).status == RunStatus.CANCELLED:
                self.metrics.run_never_executed(RunStatus.CANCELLED)

    # -- dispatching

    async def _dispatch_loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            free = self.max_concurrent - len(self.tasks)
            if free > 0:
                try:
                    claimed = await asyncio.to_thread(self._claim, free)
                except Exception:  # a database hiccup must not kill the dispatcher
                    log.exception("claiming queued runs failed")
                    claimed = []
                for run_id in claimed:
                    task = asyncio.create_task(self._execute(run_id), name=f"run-{run_id}")
                    self.tasks[run_id] = task
                    task.add_done_callback(functools.partial(self._task_done, run_id))
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_interval)
            except TimeoutError:
                pass

    def _task_done(self, run_id: int, _task: asyncio.Task[None]) -> None:
        self.tasks.pop(run_id, None)
        self._wake.set()

    def _claim(self, limit: int) -> list[int]:
        claimed: list[int] = []
        with Session(self.engine) as session:
            queued = session.exec(
                select(col(Run.id)).where(Run.status == RunStatus.QUEUED).order_by(col(Run.id)).limit(limit)
            ).all()
            for run_id in queued:
                result = session.exec(
                    update(Run)
                    .where(col(Run.id) == run_id, col(Run.status) == RunStatus.QUEUED)
                    .values(status=RunStatus.RUNNING, started_at=utcnow())
                )
                if result.rowcount == 1 and run_id is not None:
                    claimed.append(run_id)
            session.commit()
        return claimed

    # -- executing one run

    def _load(self, run_id: int) -> tuple[Run, Target] | None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status != RunStatus.RUNNING:
                return None
            target = session.get(Target, run.target_id)
            if target is None:
                return None
            session.expunge_all()
            return run, target

    async def _execute(self, run_id: int) -> None:
        started = time.monotonic()
        recorder: RunRecorder | None = None
        secrets: list[str] = []
        try:
            loaded = await asyncio.to_thread(self._load, run_id)
            if loaded is None:
                return
            run, target = loaded
            suite = find_suite(run.kind)
            if suite is None:
                await self._finish(run_id, RunStatus.FINISHED, Outcome.ERROR, f"{run.kind} is unavailable", started)
                return
            options = crud.run_options(suite, run, target)
            url = crud.run_url(run, target)
            secrets = secret_values(suite, options) + [password for password in [crud.url_password(url)] if password]
            host, port = suite.host_port(url)
            address = None
            if (host, port) not in self._own_endpoints:
                address = await check_host_async(host, port, self.allowed_networks)
            recorder = RunRecorder(self.engine, run_id, secrets)
            with pinned(host, address):  # every phase connects to the address just checked
                report = await run_suite(suite, url, options, run.phases or None, recorder)
            await recorder.close()
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # a phase swallowed the cancellation
                raise asyncio.CancelledError
            rolled = report.rolled_up()
            outcome = outcome_of(rolled_verdicts(rolled), run.gate, run.expected_failures)
            await self._finish(run_id, RunStatus.FINISHED, outcome, _summary(rolled, run), started)
        except asyncio.CancelledError:
            if recorder is not None:
                await _close_quietly(recorder)
            if self._stopping:
                await self._finish(run_id, RunStatus.INTERRUPTED, None, INTERRUPTED_MESSAGE, started)
            else:
                await self._finish(run_id, RunStatus.CANCELLED, None, "cancelled; decided clauses are kept", started)
            raise
        except NetworkRefused as exc:
            why = f"refused by the network policy: {exc}"
            await self._finish(run_id, RunStatus.FINISHED, Outcome.ERROR, why, started)
        except Exception as exc:
            log.exception("run %s failed in the harness", run_id)
            if recorder is not None:
                await _close_quietly(recorder)
            why = scrub(f"harness error: {type(exc).__name__}: {truncate(str(exc), 300)}", secrets)
            await self._finish(run_id, RunStatus.FINISHED, Outcome.ERROR, why, started)

    async def _finish(
        self, run_id: int, status: RunStatus, outcome: Outcome | None, message: str, started: float
    ) -> None:
        await asyncio.to_thread(self._write_end, run_id, status, outcome, message, time.monotonic() - started)

    def _write_end(self, run_id: int, status: RunStatus, outcome: Outcome | None, message: str, elapsed: float) -> None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None:
                return
            if run.status in ENDED_STATUSES:  # cancelled by another path meanwhile: keep that
                status, outcome, message = run.status, run.outcome, run.message
            counts = _run_counts(session, run_id)
            run.status, run.outcome, run.message = status, outcome, storable(message)
            run.counts, run.decided_clauses = counts, sum(counts.values())
            if status is RunStatus.FINISHED:
                run.total_clauses = run.decided_clauses
            run.current_phase = None
            run.finished_at = run.finished_at or utcnow()
            session.add(run)
            session.flush()
            # In the same transaction, so whoever sees the run ended sees the pruning and the metrics too.
            crud.prune_runs(session, run.target_id, self.retention_runs, commit=False)
            self.metrics.run_ended(run.status, outcome, elapsed, Counter(counts))
            session.commit()


def _summary(rolled: Sequence[RolledUp[ClauseResult]], run: Run) -> str:
    """The clauses not met (in run order), then how many could not be decided and the biggest cause."""
    expected = set(run.expected_failures)
    failing = [e.clause_id for e in rolled if e.verdict in run.gate.failing() and e.clause_id not in expected]
    parts = []
    if failing:
        shown = ", ".join(failing[:10]) + (f" and {len(failing) - 10} more" if len(failing) > 10 else "")
        parts.append(f"not met: {shown}")
    unexpected = [e for e in rolled if e.clause_id not in expected]
    causes = root_causes(unexpected, lambda r: (r.phase, r.actual))
    if causes:
        undecided = sum(len(c.clause_ids) for c in causes)
        parts.append(f"{undecided} not decided, mostly: {truncate(causes[0].reason, 200)}")
    return "; ".join(parts)


async def _close_quietly(recorder: RunRecorder) -> None:
    try:
        await recorder.close()
    except Exception:
        log.exception("writing the last results of run %s failed", recorder.run_id)
