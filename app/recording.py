"""What a run decides, written as it is decided: its clause results, transcripts, progress and end.

`RunRecorder` is the `checks.core.Sink` of one run attempt. It hands every
decided clause and transcript to the process's `GroupWriter`, which commits
what all the runs decided meanwhile in one transaction (off the event loop, `app.batch_writes`),
so progress is live and a crash loses nothing already written. Every write
is fenced on the attempt's lease (`app.leases`). `EndWriter` records a run's
end in one transaction with what goes with it: the attempt's end, the
`on_end` hook (webhooks), pruning of old runs and the metrics; its counts and
summary come from the recorder (`RunRecorder.rolled`), so it reads no results back.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import delete, func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import leases, retention
from app.batch_writes import Batch, ResultKey, write_batches
from app.db import release_free_pages
from app.listening import Announcing, answered, with_client
from app.metrics import Metrics
from app.models import ENDED_STATUSES, ClauseResultRow, Run, RunStatus, TranscriptRow, utcnow
from app.models_clause import ClauseMessage
from app.redaction import scrub
from app.textsafe import storable
from checks.core import (
    ROLLUP_RANK,
    ClauseResult,
    Outcome,
    RolledUp,
    Transcript,
    Verdict,
    roll_up,
    truncate,
    verdict_counts,
)
from checks.evidence import Progress


def _run_counts(session: Session, run_id: int) -> dict[str, int]:
    """Clauses per rolled-up verdict (zeros left out), read from the rows: for an end without a recorder."""
    rows = session.exec(
        select(ClauseResultRow.clause_id, ClauseResultRow.verdict)
        .where(ClauseResultRow.run_id == run_id)
        .order_by(col(ClauseResultRow.id))
    ).all()
    counts = verdict_counts(roll_up(rows, lambda row: (row[0], row[1])))
    return {verdict: n for verdict, n in counts.items() if n}


def transcript_row(session: Session, run_id: int, data: dict[str, Any]) -> TranscriptRow:
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


@dataclass(frozen=True)
class Decided:
    """One stored result as a run's end reads it: `executor._summary` names its phase and `error` reason."""

    phase: str
    clause_id: str
    verdict: str
    actual: str  # as stored (secrets masked), kept for `error` results only: the summary's causes


@dataclass
class KeptResults:
    """What earlier attempts of a run kept (`prepare_attempt`): the rows this attempt goes on from."""

    transcript_offset: int = 0
    rows: dict[ResultKey, tuple[int, str]] = field(default_factory=dict)  # row id and verdict, in run order
    finished_phases: list[str] = field(default_factory=list)
    error_reasons: dict[ResultKey, str] = field(default_factory=dict)  # the stored `actual` of kept errors


GATHER_SECONDS = 0.05  # the least time from one group commit's start to the next's


class GroupWriter:
    """One writer for all the runs of a process: whatever they decided meanwhile goes in one commit.

    A commit per clause per run on a single SQLite writer serialized the runs
    behind each other; grouping keeps each decided clause durable within
    a tenth of a second while the number of commits no longer grows with the runs.
    A commit starts at most every GATHER_SECONDS: what the runs decide meanwhile
    goes in the next one, so the run processes take SQLite's one write lock less often.
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
        loop = asyncio.get_running_loop()
        while self._dirty:
            await self._wake.wait()
            self._wake.clear()
            started = loop.time()
            recorders, self._dirty = list(self._dirty), set()
            taken = [(recorder, recorder.take()) for recorder in recorders]
            batches = [batch for _, batch in taken if batch is not None]
            try:
                errors = await asyncio.to_thread(write_batches, self.engine, batches) if batches else {}
            except Exception as exc:
                errors = {batch.run_id: exc for batch in batches}
            for recorder, batch in taken:
                recorder.written(batch, errors.get(recorder.run_id))
            if self._dirty:
                await asyncio.sleep(max(0.0, started + GATHER_SECONDS - loop.time()))

    async def stop(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)


def _worst(phases: dict[str, Verdict]) -> Verdict:
    """A clause's rolled-up verdict from its verdict in each phase (`roll_up`'s rule: the highest rank)."""
    return max(phases.values(), key=ROLLUP_RANK.__getitem__)


class RunRecorder:
    """A `checks.core.Sink` that persists what a run decides as soon as it is decided.

    Sink calls arrive on the event loop; they keep the data and mark the
    recorder dirty for the group writer. Transcript numbers are shifted past
    those an earlier attempt of the run kept. The recorder keeps the run's
    verdicts and row ids, so it counts the run's clauses itself. `close()` waits until all of it
    is written and raises what writing raised (`LeaseLost` when the attempt lost the run).
    """

    def __init__(
        self,
        writer: GroupWriter,
        run_id: int,
        attempt: int,
        secrets: Sequence[str] = (),
        kept: KeptResults | None = None,
    ) -> None:
        self.writer = writer
        self.run_id, self.attempt = run_id, attempt
        self.secrets = list(secrets)
        kept = kept or KeptResults()
        self.offset = kept.transcript_offset
        # Every row the run holds, so a batch needs no lookups and the counts no re-reading of the run.
        self._row_ids = {key: row_id for key, (row_id, _) in kept.rows.items()}
        # Each clause's verdict by phase, in run order as the rows, and how many clauses roll up to each verdict:
        # kept as results arrive, since rolling the whole run up again for every batch was quadratic.
        self._phases_of: dict[str, dict[str, Verdict]] = {}
        self._tally: Counter[str] = Counter()
        for key, (_, verdict) in kept.rows.items():
            self._decided(key, verdict)
        self._reasons = dict(kept.error_reasons)  # so the run's end reads nothing back
        self.error: BaseException | None = None
        self._results: dict[tuple[str, str], dict[str, Any]] = {}
        self._transcripts: dict[int, Transcript] = {}  # changed since the last batch, read as they are then
        self._taken: dict[int, Progress] = {}  # each transcript's progress in its last batch
        self._phase: str | None = None
        self._finished = list(kept.finished_phases)  # the run's, earlier attempts' included
        self._phase_finished = False  # since the last write
        self.announcing: Announcing | None = None  # listen-mode runs only
        self._announcement: dict[str, Any] | None = None  # the newest, while the run waits on it
        self._unwritten_announcement = False
        self._pending = 0  # changes not yet committed
        self._flushed = asyncio.Event()
        self._flushed.set()

    def announce(self, url: str, message: str) -> None:
        if self.announcing is None:
            return
        self._announcement = self.announcing.stored(url, message, self._announcement)
        self._unwritten_announcement = True
        self._changed()

    def connected(self, address: str) -> None:
        """A client connected (listen mode): the announcement is answered and names it."""
        if self._announcement is not None:
            self._announcement = with_client(self._announcement, address)
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
        key = (result.phase, result.clause_id)
        self._results[key] = data
        self._decided(key, data["verdict"])
        # An error's reason as its row stores it (masked, storable: `app.batch_writes`), for the run's summary.
        self._reasons[key] = storable(scrub(data["actual"], self.secrets)) if data["verdict"] == "error" else ""
        self._changed()

    def transcript(self, transcript: Transcript) -> None:
        """A transcript to write: each decided clause names its evidence again, and only a transcript that
        gained a frame or its close since its last batch is written again (each write compresses it whole)."""
        self._moved_on()
        if self._taken.get(transcript.id) == transcript.progress():
            return
        self._transcripts[transcript.id] = transcript
        self._changed()

    def phase(self, name: str, state: str) -> None:
        self._moved_on()
        if state == "running":
            self._phase = name
        elif state == "done":
            if name not in self._finished:
                self._finished.append(name)
            self._phase_finished = True
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
            [self._taken_transcript(transcript) for transcript in self._transcripts.values()],
            self._phase,
            list(self._finished) if self._phase_finished else None,
            counts=self._counts(),
            row_ids={key: self._row_ids[key] for key in self._results if key in self._row_ids},
            secrets=self.secrets,
            announcement=self._announcement if self._unwritten_announcement else None,
        )
        self._results, self._transcripts, self._phase, self._phase_finished = {}, {}, None, False
        self._unwritten_announcement = False
        return batch

    def _taken_transcript(self, transcript: Transcript) -> dict[str, Any]:
        self._taken[transcript.id] = transcript.progress()
        data = transcript.to_dict()
        data["id"] += self.offset
        return data

    def _decided(self, key: ResultKey, verdict: str) -> None:
        """Record a (phase, clause) verdict and count its clause's rolled-up verdict again, as `roll_up` would."""
        phase, clause_id = key
        phases = self._phases_of.setdefault(clause_id, {})
        before = _worst(phases) if phases else None
        phases[phase] = Verdict(verdict)
        after = _worst(phases)
        if before != after:
            if before is not None:
                self._tally[str(before)] -= 1
            self._tally[str(after)] += 1

    def _counts(self) -> dict[str, int]:
        """Clauses per rolled-up verdict (zeros left out), as `_run_counts` reads them from the rows."""
        return {verdict: n for verdict, n in self._tally.items() if n}

    def rolled(self) -> tuple[list[RolledUp[Decided]], dict[str, int]]:
        """The run's clauses rolled up and their counts, as its rows say once `close()` returned (ids in order)."""
        decided = [
            Decided(phase, clause_id, str(verdict), self._reasons.get((phase, clause_id), ""))
            for clause_id, phases in self._phases_of.items()
            for phase, verdict in phases.items()
        ]
        rolled = roll_up(decided, lambda row: (row.clause_id, row.verdict))
        return rolled, {verdict: n for verdict, n in verdict_counts(rolled).items() if n}

    def written(self, batch: Batch | None, error: BaseException | None) -> None:
        if error is not None and self.error is None:
            self.error = error
        if batch is not None and error is None:
            self._row_ids.update(batch.inserted)
        if not self._pending or self.error is not None:
            self._flushed.set()

    async def close(self) -> None:
        """Wait until everything decided so far is committed; raises what writing raised."""
        await asyncio.shield(self._flushed.wait())
        if self.error is not None:
            raise self.error


def prepare_attempt(engine: Engine, run_id: int, attempt: int) -> KeptResults:
    """Drop what earlier attempts left of unfinished phases; returns what they kept."""
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
        rows = session.exec(
            select(ClauseResultRow.id, ClauseResultRow.phase, ClauseResultRow.clause_id, ClauseResultRow.verdict)
            .where(ClauseResultRow.run_id == run_id)
            .order_by(col(ClauseResultRow.id))
        ).all()
        reasons = session.exec(  # the summary's causes; on a first attempt the run holds no rows
            select(ClauseResultRow.phase, ClauseResultRow.clause_id, ClauseMessage.actual)
            .join(ClauseMessage, col(ClauseMessage.id) == col(ClauseResultRow.message_id))
            .where(ClauseResultRow.run_id == run_id, ClauseResultRow.verdict == "error")
        ).all()
        session.commit()
        kept = {(phase, clause): (cast(int, i), v) for i, phase, clause, v in rows}
        return KeptResults(int(highest or 0), kept, done, {(phase, clause): text for phase, clause, text in reasons})


FREED_PAGES_PER_END = 4096  # a bounded pause at each run's end; the retention sweep returns the rest


@dataclass
class EndWriter:
    """Writes a run's end, in the transaction that also ends the attempt, prunes old runs and counts it."""

    engine: Engine
    retention_runs: int = 500
    whole_passing: int = 20  # clean passing runs per target keeping whole transcripts (`app.retention`)
    metrics: Metrics = field(default_factory=Metrics)
    on_end: Callable[[Session, Run], object] | None = None  # inside the transaction that ends a run

    def write(
        self,
        run_id: int,
        attempt: int,
        status: RunStatus,
        outcome: Outcome | None,
        message: str,
        elapsed: float,
        counts: dict[str, int] | None = None,
    ) -> None:
        """`counts` are the run's, from its recorder once all it decided is committed; else read from the rows."""
        with Session(self.engine) as session:
            run = session.exec(select(Run).where(Run.id == run_id).with_for_update()).first()
            if run is None:
                return
            if run.status in ENDED_STATUSES:  # cancelled by another path meanwhile: keep that
                status, outcome, message = run.status, run.outcome, run.message
            elif run.attempts != attempt:  # another attempt took over: it records the end
                return
            counts = _run_counts(session, run_id) if counts is None else counts
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
            pruned, summarised = retention.apply_to_target(
                session, run.target_id, self.retention_runs, self.whole_passing
            )
            self.metrics.run_ended(run.status, outcome, elapsed, Counter(counts))
            session.commit()
        if pruned or summarised:
            release_free_pages(self.engine, FREED_PAGES_PER_END)
