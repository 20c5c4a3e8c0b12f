"""Background runs: queued in the database, executed by async workers under a concurrency limit.

Each run calls `checks.core.run_suite` with a `RunRecorder` sink. The
recorder hands every decided clause and transcript to a writer task that
commits it at once (off the event loop), so progress is live and a crash
loses nothing already written. On start-up, runs left `running` by a dead
process become `interrupted` with their decided clauses intact, and queued
runs are picked up again.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import functools
import logging
import os
import socket
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import delete, func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud, leases, parity_runs
from app.listening import Announcing, answered, listen_policy
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


@dataclass
class Batch:
    """What one run decided since its last write, fenced on the attempt that decided it."""

    run_id: int
    attempt: int
    results: list[dict[str, Any]]
    transcripts: list[dict[str, Any]]
    phase: str | None
    finished_phases: list[str]
    secrets: Sequence[str] = ()
    announcement: dict[str, Any] | None = None


def _write_one(session: Session, batch: Batch) -> None:
    """Upsert results by (run, phase, clause) and transcripts by (run, number); update progress; no commit."""
    if not leases.holds(session, batch.run_id, batch.attempt):
        raise leases.LeaseLost(f"run {batch.run_id}: attempt {batch.attempt} no longer holds it")
    results, transcripts = batch.results, batch.transcripts
    if batch.secrets:
        results, transcripts = scrub(results, batch.secrets), scrub(transcripts, batch.secrets)
    results, transcripts = storable(results), storable(transcripts)
    for data in transcripts:
        session.add(_transcript_row(session, batch.run_id, data))
    for data in results:
        session.add(_result_row(session, batch.run_id, data))
    session.flush()
    counts = _run_counts(session, batch.run_id)
    values: dict[str, Any] = {"counts": counts, "decided_clauses": sum(counts.values())}
    if batch.phase is not None:
        values["current_phase"] = batch.phase
    if batch.announcement is not None:
        values["announcement"] = batch.announcement
    if batch.finished_phases:
        run = session.get(Run, batch.run_id)
        done = list(run.finished_phases) if run is not None else []
        values["finished_phases"] = done + [name for name in batch.finished_phases if name not in done]
    session.exec(update(Run).where(col(Run.id) == batch.run_id).values(**values))


def write_batches(engine: Engine, batches: Sequence[Batch]) -> dict[int, BaseException]:
    """Commit every batch in one transaction (a group commit); returns the errors by run id.

    When the group fails, each batch is written alone, so one run whose lease
    was lost (or whose data the database refuses) costs only that run.
    """
    try:
        with Session(engine) as session:
            for batch in batches:
                _write_one(session, batch)
            session.commit()
        return {}
    except Exception:
        if len(batches) == 1:
            raise
    errors: dict[int, BaseException] = {}
    for batch in batches:
        try:
            with Session(engine) as session:
                _write_one(session, batch)
                session.commit()
        except Exception as exc:
            errors[batch.run_id] = exc
    return errors


class GroupWriter:
    """One writer for all the runs of a process: whatever they decided meanwhile goes in one commit.

    A commit per clause per run on a single SQLite writer serialized the runs
    behind each other; grouping keeps each decided clause durable within
    milliseconds while the number of commits no longer grows with the runs.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._dirty: set[RunRecorder] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def mark(self, recorder: RunRecorder) -> None:
        self._dirty.add(recorder)
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop(), name="group-writer")

    async def _loop(self) -> None:
        while self._dirty:
            await self._wake.wait()
            self._wake.clear()
            recorders, self._dirty = list(self._dirty), set()
            taken = [(recorder, recorder.take()) for recorder in recorders]
            batches = [batch for _, batch in taken if batch is not None]
            try:
                errors = await asyncio.to_thread(write_batches, self.engine, batches) if batches else {}
            except Exception as exc:
                errors = {batch.run_id: exc for batch in batches}
            for recorder, batch in taken:
                recorder.written(batch, errors.get(recorder.run_id))

    async def stop(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


class RunRecorder:
    """A `checks.core.Sink` that persists what a run decides as soon as it is decided.

    Sink calls arrive on the event loop; they keep the data and mark the
    recorder dirty for the group writer. Transcript numbers are shifted past
    those an earlier attempt of the run kept. `close()` waits until all of it
    is written and raises what writing raised (`LeaseLost` when the attempt lost the run).
    """

    def __init__(
        self,
        writer: GroupWriter,
        run_id: int,
        attempt: int,
        secrets: Sequence[str] = (),
        transcript_offset: int = 0,
    ) -> None:
        self.writer = writer
        self.run_id, self.attempt = run_id, attempt
        self.secrets = list(secrets)
        self.offset = transcript_offset
        self.error: BaseException | None = None
        self._results: dict[tuple[str, str], dict[str, Any]] = {}
        self._transcripts: dict[int, dict[str, Any]] = {}
        self._phase: str | None = None
        self._finished: list[str] = []
        self.announcing: Announcing | None = None  # listen-mode runs only
        self._announcement: dict[str, Any] | None = None  # the newest, while the run waits on it
        self._unwritten_announcement = False
        self._pending = 0  # changes not yet committed
        self._flushed = asyncio.Event()
        self._flushed.set()

    def announce(self, url: str, message: str) -> None:
        if self.announcing is None:
            return
        self._announcement = self.announcing.stored(url, message)
        self._unwritten_announcement = True
        self._changed()

    def _moved_on(self) -> None:
        """Whatever the run records next means it stopped waiting on its announcement."""
        if self._announcement is not None and self._announcement["waiting"]:
            self._announcement = answered(self._announcement)
            self._unwritten_announcement = True

    def _changed(self) -> None:
        self._pending += 1
        self._flushed.clear()
        self.writer.mark(self)

    def result(self, result: ClauseResult) -> None:
        self._moved_on()
        data = result.to_dict()
        data["transcript_ids"] = [number + self.offset for number in data["transcript_ids"]]
        self._results[(result.phase, result.clause_id)] = data
        self._changed()

    def transcript(self, transcript: Transcript) -> None:
        self._moved_on()
        data = transcript.to_dict()
        data["id"] += self.offset
        self._transcripts[data["id"]] = data
        self._changed()

    def phase(self, name: str, state: str) -> None:
        self._moved_on()
        if state == "running":
            self._phase = name
        elif state == "done":
            self._finished.append(name)
        self._changed()

    def take(self) -> Batch | None:
        """What to write next (called by the group writer), or None when nothing changed."""
        pending, self._pending = self._pending, 0
        if not pending or self.error is not None:
            return None
        batch = Batch(
            self.run_id,
            self.attempt,
            list(self._results.values()),
            list(self._transcripts.values()),
            self._phase,
            self._finished,
            self.secrets,
            self._announcement if self._unwritten_announcement else None,
        )
        self._results, self._transcripts, self._phase, self._finished = {}, {}, None, []
        self._unwritten_announcement = False
        return batch

    def written(self, batch: Batch | None, error: BaseException | None) -> None:
        if error is not None and self.error is None:
            self.error = error
        if not self._pending or self.error is not None:
            self._flushed.set()

    async def close(self) -> None:
        """Wait until everything decided so far is committed; raises what writing raised."""
        await asyncio.shield(self._flushed.wait())
        if self.error is not None:
            raise self.error


def prepare_attempt(engine: Engine, run_id: int, attempt: int) -> int:
    """Drop what earlier attempts left of unfinished phases; returns the highest transcript number kept."""
    with Session(engine) as session:
        if not leases.holds(session, run_id, attempt):
            raise leases.LeaseLost(f"run {run_id}: attempt {attempt} no longer holds it")
        run = session.get(Run, run_id)
        done = list(run.finished_phases) if run is not None else []
        if attempt > 1:
            session.exec(
                delete(ClauseResultRow).where(
                    col(ClauseResultRow.run_id) == run_id, col(ClauseResultRow.phase).not_in(done)
                )
            )
            session.exec(
                delete(TranscriptRow).where(col(TranscriptRow.run_id) == run_id, col(TranscriptRow.phase).not_in(done))
            )
        highest = session.exec(select(func.max(TranscriptRow.number)).where(TranscriptRow.run_id == run_id)).one()
        session.commit()
        return int(highest or 0)


def stored_clauses(engine: Engine, run_id: int) -> list[RolledUp[ClauseResultRow]]:
    """Every clause the run holds, across its attempts, rolled up over its phases."""
    with Session(engine) as session:
        rows = session.exec(
            select(ClauseResultRow).where(ClauseResultRow.run_id == run_id).order_by(col(ClauseResultRow.id))
        ).all()
        session.expunge_all()
    return roll_up(rows, lambda row: (row.clause_id, row.verdict))


def recover_interrupted(engine: Engine) -> int:
    """Mark runs left `running` by a dead process as interrupted; returns how many."""
    with Session(engine) as session:
        result = session.exec(
            update(Run)
            .where(col(Run.status) == RunStatus.RUNNING)
            .values(
                status=RunStatus.INTERRUPTED,
                finished_at=utcnow(),
                current_phase=None,
                lease_until=None,
                message=INTERRUPTED_MESSAGE,
            )
        )
        session.commit()
        return result.rowcount or 0


# ---------------------------------------------------------------- executing one run


class Ending(enum.StrEnum):
    """How a run that was stopped before its end is recorded."""

    CANCELLED = "cancelled"  # someone asked: decided clauses are kept
    INTERRUPTED = "interrupted"  # the process is going away and nobody will resume it
    HANDED_BACK = "handed back"  # a draining worker returns it to the queue; another attempt resumes it


@dataclass
class Executor:
    """Executes one run, whoever calls it: the embedded runner or a procrastinate worker.

    The run must already be claimed (`leases.claim`) by `attempt`. A lease
    renewer runs beside the suite; when it finds the attempt lost the run,
    the suite is stopped and nothing more is written. Phases an earlier
    attempt finished are kept; the first unfinished one starts again.
    """

    engine: Engine
    worker: str
    allowed_networks: Sequence[str] = ()
    retention_runs: int = 500
    metrics: Metrics = field(default_factory=Metrics)
    lease_seconds: float = 60.0
    requeue: leases.Requeue | None = None
    on_end: Callable[[Session, Run], object] | None = None  # inside the transaction that ends a run
    own_endpoints: set[tuple[str, int | None]] = field(default_factory=set)
    listen_host: str = "127.0.0.1"  # where listen-mode (client kind) runs bind, and on which ports
    listen_ports: Sequence[int] = (0,)
    _writer: GroupWriter | None = None

    @property
    def writer(self) -> GroupWriter:
        if self._writer is None:
            self._writer = GroupWriter(self.engine)
        return self._writer

    def allow_own(self, url: str) -> None:
        """Let runs reach `url`, a server this service runs itself (the demo), whatever the policy says."""
        parsed = urlsplit(url)
        self.own_endpoints.add((parsed.hostname or "", parsed.port))

    async def execute(self, run_id: int, attempt: int, ending: Callable[[], Ending]) -> None:
        """Run the suite; `ending` says how to record a stop from outside (cancellation)."""
        lost = asyncio.Event()
        runner = asyncio.current_task()
        renewer = asyncio.create_task(self._renew(run_id, attempt, lost, runner), name=f"run-{run_id}-lease")
        try:
            await self._execute(run_id, attempt, ending, lost)
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)

    async def _renew(self, run_id: int, attempt: int, lost: asyncio.Event, runner: asyncio.Task[Any] | None) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            try:
                held = await asyncio.to_thread(leases.renew, self.engine, run_id, attempt, self.lease_seconds)
            except Exception:  # a database hiccup: try again before the lease runs out
                log.exception("renewing the lease of run %s failed", run_id)
                continue
            if not held:
                log.warning("run %s: attempt %d lost its lease; stopping it", run_id, attempt)
                lost.set()
                if runner is not None:
                    runner.cancel()
                return

    def _load(self, run_id: int, attempt: int) -> tuple[Run, Target] | None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status != RunStatus.RUNNING or run.attempts != attempt:
                return None
            target = session.get(Target, run.target_id)
            if target is None:
                return None
            session.expunge_all()
            return run, target

    async def _execute(self, run_id: int, attempt: int, ending: Callable[[], Ending], lost: asyncio.Event) -> None:
        started = time.monotonic()
        recorder: RunRecorder | None = None
        secrets: list[str] = []
        end = functools.partial(self._finish, run_id, attempt, started)
        try:
            loaded = await asyncio.to_thread(self._load, run_id, attempt)
            if loaded is None:
                return
            run, target = loaded
            parity = await asyncio.to_thread(parity_runs.load_other_side, self.engine, run_id)
            if parity is not None:
                await parity_runs.execute_parity(self, run, target, attempt, parity, end)
                return
            suite = find_suite(run.kind)
            if suite is None:
                await end(RunStatus.FINISHED, Outcome.ERROR, f"{run.kind} is unavailable")
                return
            options = crud.run_options(suite, run, target)
            url = crud.run_url(run, target)
            secrets = secret_values(suite, options) + [password for password in [crud.url_password(url)] if password]
            listen = None
            host, port, address = "", None, None
            if suite.listen:  # a client kind: the run listens here, the policy applies to the client's source
                listen = listen_policy(self.listen_host, self.listen_ports, self.allowed_networks, options)
            else:
                host, port = suite.host_port(url)
            if listen is None and (host, port) not in self.own_endpoints:
                address = await check_host_async(host, port, self.allowed_networks)
            offset = await asyncio.to_thread(prepare_attempt, self.engine, run_id, attempt)
            recorder = RunRecorder(self.writer, run_id, attempt, secrets, offset)
            if listen is not None:
                deadline = float(getattr(options, "connect_deadline", 0.0))
                recorder.announcing = Announcing(attempt, self.worker, deadline, listen.host)
            with pinned(host, address):  # every phase connects to the address just checked
                await run_suite(
                    suite, url, options, run.phases or None, recorder, finished=run.finished_phases, listen=listen
                )
            await recorder.close()
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # a phase swallowed the cancellation
                raise asyncio.CancelledError
            rolled = await asyncio.to_thread(stored_clauses, self.engine, run_id)
            outcome = outcome_of(rolled_verdicts(rolled), run.gate, run.expected_failures)
            await end(RunStatus.FINISHED, outcome, _summary(rolled, run))
        except leases.LeaseLost:
            log.warning("run %s: attempt %d lost its lease; another attempt owns it", run_id, attempt)
        except asyncio.CancelledError:
            if recorder is not None:
                await _close_quietly(recorder)
            if not lost.is_set():
                how = ending()
                if how is Ending.HANDED_BACK:
                    await asyncio.to_thread(self._hand_back, run_id, attempt)
                elif how is Ending.INTERRUPTED:
                    await end(RunStatus.INTERRUPTED, None, INTERRUPTED_MESSAGE)
                else:
                    await end(RunStatus.CANCELLED, None, "cancelled; decided clauses are kept")
            if not lost.is_set():
                raise
        except NetworkRefused as exc:
            await end(RunStatus.FINISHED, Outcome.ERROR, f"refused by the network policy: {exc}")
        except Exception as exc:
            log.exception("run %s failed in the harness", run_id)
            if recorder is not None:
                await _close_quietly(recorder)
            why = scrub(f"harness error: {type(exc).__name__}: {truncate(str(exc), 300)}", secrets)
            await end(RunStatus.FINISHED, Outcome.ERROR, why)

    def _hand_back(self, run_id: int, attempt: int) -> None:
        with Session(self.engine) as session:
            if not leases.holds(session, run_id, attempt):
                return
            run = session.get(Run, run_id)
            if run is None:
                return
            leases.end_attempt(session, run_id, attempt, str(Ending.HANDED_BACK))
            leases.put_back(session, run, self.requeue)
            session.commit()

    async def _finish(self, run_id: int, attempt: int, started: float, *end: Any) -> None:
        status, outcome, message = end
        await asyncio.to_thread(self._write_end, run_id, attempt, status, outcome, message, time.monotonic() - started)

    def _write_end(
        self, run_id: int, attempt: int, status: RunStatus, outcome: Outcome | None, message: str, elapsed: float
    ) -> None:
        with Session(self.engine) as session:
            run = session.exec(select(Run).where(Run.id == run_id).with_for_update()).first()
            if run is None:
                return
            if run.status in ENDED_STATUSES:  # cancelled by another path meanwhile: keep that
                status, outcome, message = run.status, run.outcome, run.message
            elif run.attempts != attempt:  # another attempt took over: it records the end
                return
            counts = _run_counts(session, run_id)
            run.status, run.outcome, run.message = status, outcome, storable(message)
            run.counts, run.decided_clauses = counts, sum(counts.values())
            if status is RunStatus.FINISHED:
                run.total_clauses = run.decided_clauses
            run.current_phase, run.lease_until = None, None
            run.finished_at = run.finished_at or utcnow()
            session.add(run)
            leases.end_attempt(session, run_id, attempt, str(run.status))
            session.flush()
            if self.on_end is not None:
                self.on_end(session, run)
            # In the same transaction, so whoever sees the run ended sees the pruning and the metrics too.
            crud.prune_runs(session, run.target_id, self.retention_runs, commit=False)
            self.metrics.run_ended(run.status, outcome, elapsed, Counter(counts))
            session.commit()


# ---------------------------------------------------------------- the embedded runner


class RunBackend(abc.ABC):
    """What the service executes runs through: the embedded `Runner`, or `app.worker.WorkerBackend` (workers)."""

    @abc.abstractmethod
    def allow_own(self, url: str) -> None:
        """Let runs reach one of the service's own servers (a demo target) whatever the network policy says."""

    @abc.abstractmethod
    def wake(self) -> None:
        """A run was queued."""

    @abc.abstractmethod
    async def cancel(self, run_id: int) -> None:
        """Cancel a queued or running run; decided clauses are kept and the status becomes `cancelled`."""

    @abc.abstractmethod
    async def stop(self) -> None: ...

    async def delete_target(self, session: Session, target: Target) -> None:
        """Cancel the target's queued and running runs, then delete it with all its runs."""
        for run_id in await asyncio.to_thread(crud.live_run_ids, session, target):
            await self.cancel(run_id)
        await asyncio.to_thread(crud.delete_target, session, target)


class Runner(RunBackend):
    """Claims queued runs and executes up to `max_concurrent` of them at once, inside this process."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_concurrent: int = 4,
        allowed_networks: Sequence[str] = (),
        listen_host: str = "127.0.0.1",
        listen_ports: Sequence[int] = (0,),
        retention_runs: int = 500,
        metrics: Metrics | None = None,
        poll_interval: float = 2.0,
        on_end: Callable[[Session, Run], object] | None = None,
    ) -> None:
        self.engine = engine
        self.max_concurrent = max_concurrent
        self.metrics = metrics or Metrics()
        self.poll_interval = poll_interval
        self.executor = Executor(
            engine,
            worker=f"{socket.gethostname()}:{os.getpid()}:embedded",
            allowed_networks=allowed_networks,
            listen_host=listen_host,
            listen_ports=listen_ports,
            retention_runs=retention_runs,
            metrics=self.metrics,
            # Nothing else executes these runs: the lease only fences writes; start-up interrupts leftovers.
            lease_seconds=3600.0,
            on_end=on_end,
        )
        self.tasks: dict[int, asyncio.Task[None]] = {}
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
        self.executor.allow_own(url)

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
        await asyncio.to_thread(cancel_in_db, self.engine, run_id, self.metrics)

    # -- dispatching

    async def _dispatch_loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            free = self.max_concurrent - len(self.tasks)
            if free > 0:
                try:
                    claimed = await asyncio.to_thread(
                        leases.claim_next, self.engine, self.executor.worker, self.executor.lease_seconds, free
                    )
                except Exception:  # a database hiccup must not kill the dispatcher
                    log.exception("claiming queued runs failed")
                    claimed = []
                for run_id, attempt in claimed:
                    task = asyncio.create_task(self._execute(run_id, attempt), name=f"run-{run_id}")
                    self.tasks[run_id] = task
                    task.add_done_callback(functools.partial(self._task_done, run_id))
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_interval)
            except TimeoutError:
                pass

    async def _execute(self, run_id: int, attempt: int) -> None:
        await self.executor.execute(run_id, attempt, self._ending)

    def _ending(self) -> Ending:
        return Ending.INTERRUPTED if self._stopping else Ending.CANCELLED

    def _task_done(self, run_id: int, _task: asyncio.Task[None]) -> None:
        self.tasks.pop(run_id, None)
        self._wake.set()


def cancel_in_db(engine: Engine, run_id: int, metrics: Metrics) -> bool:
    """Cancel a run nobody here executes; True when it was queued (it never ran)."""
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is None or run.status in ENDED_STATUSES:
            return False
        was_queued = run.status == RunStatus.QUEUED
        if crud.cancel_run(session, run).status == RunStatus.CANCELLED and was_queued:
            metrics.run_never_executed(RunStatus.CANCELLED)
        return was_queued


def _summary(rolled: Sequence[RolledUp[Any]], run: Run) -> str:
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
