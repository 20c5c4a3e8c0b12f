"""The bulk writer of a run's results: one row per (run, phase, clause), counts kept by the recorder, fenced writes."""

from __future__ import annotations

import asyncio
import random

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import leases
from app.db import make_engine, upgrade_database
from app.models import ClauseResultRow, Run, RunStatus, TranscriptRow
from app.recording import GroupWriter, KeptResults, RunRecorder, _run_counts, prepare_attempt
from checks.core import ClauseResult, Level, Transcript, Verdict, roll_up, verdict_counts
from tests.app.constructed import add_run, add_target


def _queued_run(url: str) -> tuple[Engine, int]:
    upgrade_database(url)
    engine = make_engine(url)
    with Session(engine) as session:
        run = add_run(session, add_target(session), {}, status=RunStatus.QUEUED, outcome="")
        return engine, run.id or 0


def _result(phase: str, clause: str, verdict: Verdict, actual: str = "") -> ClauseResult:
    return ClauseResult(clause, Level.MUST, verdict, phase, expected="a reply", actual=actual or str(verdict))


def _stored(engine: Engine, run_id: int) -> tuple[list[tuple[str, str, str, str]], dict[str, int], int]:
    with Session(engine) as session:
        rows = session.exec(
            select(ClauseResultRow).where(ClauseResultRow.run_id == run_id).order_by(col(ClauseResultRow.id))
        ).all()
        found = [(r.phase, r.clause_id, r.verdict, r.actual) for r in rows]
        run = session.get(Run, run_id)
        assert run is not None
        assert run.counts == _run_counts(session, run_id), "the recorder's counts are what the rows say"
        return found, run.counts, run.decided_clauses


async def test_results_decided_again_update_their_row_and_counts_roll_up(database_url: str) -> None:
    engine, run_id = _queued_run(database_url)
    attempt = leases.claim(engine, run_id, "w", 60.0)
    assert attempt == 1
    writer = GroupWriter(engine)
    recorder = RunRecorder(writer, run_id, attempt, ["s3cret"], prepare_attempt(engine, run_id, attempt))
    recorder.result(_result("one", "c.a", Verdict.PASS))
    recorder.result(_result("one", "c.b", Verdict.ERROR, actual="saw s3cret"))
    recorder.transcript(Transcript(1, "one", "first"))
    await recorder.close()
    recorder.result(_result("one", "c.b", Verdict.FAIL))  # decided again, worse: the same row
    recorder.result(_result("two", "c.a", Verdict.WARN))  # the same clause in another phase: a row of its own
    recorder.transcript(Transcript(1, "one", "first, closed", close_code=1000))
    await recorder.close()
    rows, counts, decided = _stored(engine, run_id)
    assert rows == [
        ("one", "c.a", "pass", "pass"),
        ("one", "c.b", "fail", "fail"),
        ("two", "c.a", "warn", "warn"),
    ]
    assert counts == {"warn": 1, "fail": 1} and decided == 2
    with Session(engine) as session:
        transcripts = session.exec(select(TranscriptRow).where(TranscriptRow.run_id == run_id)).all()
        assert [(t.number, t.label, t.close_code) for t in transcripts] == [(1, "first, closed", 1000)]


def _queue_again(engine: Engine, run_id: int) -> None:
    """What the lease sweep does to a run whose worker was lost: queued again for the next attempt."""
    with Session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        run.status = RunStatus.QUEUED
        session.add(run)
        session.commit()


async def test_a_resumed_attempt_counts_and_updates_what_earlier_attempts_kept(database_url: str) -> None:
    engine, run_id = _queued_run(database_url)
    first = leases.claim(engine, run_id, "w", 60.0) or 0
    recorder = RunRecorder(GroupWriter(engine), run_id, first, (), prepare_attempt(engine, run_id, first))
    recorder.result(_result("done", "c.a", Verdict.PASS))
    recorder.phase("done", "done")
    recorder.result(_result("cut", "c.b", Verdict.PASS))  # its phase never finished: dropped on resuming
    await recorder.close()
    _queue_again(engine, run_id)  # the attempt lost its worker: the run is queued again
    second = leases.claim(engine, run_id, "w", 60.0) or 0
    kept = prepare_attempt(engine, run_id, second)
    assert list(kept.rows) == [("done", "c.a")]
    recorder = RunRecorder(GroupWriter(engine), run_id, second, (), kept)
    recorder.result(_result("cut", "c.b", Verdict.FAIL))
    recorder.result(_result("done", "c.a", Verdict.WARN))  # a kept row decided again: updated, not doubled
    await recorder.close()
    rows, counts, _ = _stored(engine, run_id)
    assert rows == [("done", "c.a", "warn", "warn"), ("cut", "c.b", "fail", "fail")]
    assert counts == {"warn": 1, "fail": 1}


async def test_a_run_that_lost_its_lease_writes_nothing_and_costs_the_others_nothing(database_url: str) -> None:
    engine, kept_id = _queued_run(database_url)
    with Session(engine) as session:
        lost_id = add_run(session, add_target(session, "u"), {}, status=RunStatus.QUEUED, outcome="").id or 0
    writer = GroupWriter(engine)
    recorders = {}
    for run_id in (kept_id, lost_id):
        attempt = leases.claim(engine, run_id, "w", 60.0) or 0
        recorders[run_id] = RunRecorder(writer, run_id, attempt, (), prepare_attempt(engine, run_id, attempt))
    with Session(engine) as session:  # another attempt took the second run over
        run = session.get(Run, lost_id)
        assert run is not None
        run.attempts += 1
        session.add(run)
        session.commit()
    for recorder in recorders.values():  # both in one group commit, which fails for the second
        recorder.result(_result("one", "c.a", Verdict.PASS))
    await recorders[kept_id].close()
    try:
        await recorders[lost_id].close()
        raise AssertionError("the lost attempt's close should raise LeaseLost")
    except leases.LeaseLost:
        pass
    assert _stored(engine, kept_id)[0] == [("one", "c.a", "pass", "pass")]
    assert _stored(engine, lost_id)[0] == []
    recorders[kept_id].result(_result("one", "c.a", Verdict.FAIL))  # its row id came from the retried commit
    await recorders[kept_id].close()
    assert _stored(engine, kept_id)[0] == [("one", "c.a", "fail", "fail")]


def _rows_rolled(engine: Engine, run_id: int) -> list[tuple[str, str, str, str]]:
    """What a run's end read back before the recorder rolled up itself: (clause, verdict, phase, reason)."""
    with Session(engine) as session:
        rows = session.exec(
            select(ClauseResultRow).where(ClauseResultRow.run_id == run_id).order_by(col(ClauseResultRow.id))
        ).all()
        rolled = roll_up(rows, lambda row: (row.clause_id, row.verdict))
        return [(e.clause_id, str(e.verdict), e.decisive.phase, _reason(e.verdict, e.decisive.actual)) for e in rolled]


def _reason(verdict: str, actual: str) -> str:
    return actual if verdict == "error" else ""  # the summary reads the reasons of errors only


async def test_the_end_rolls_up_what_the_rows_say_across_attempts_without_reading_them(database_url: str) -> None:
    engine, run_id = _queued_run(database_url)
    first = leases.claim(engine, run_id, "w", 60.0) or 0
    recorder = RunRecorder(GroupWriter(engine), run_id, first, ["s3cret"], prepare_attempt(engine, run_id, first))
    recorder.result(_result("done", "c.a", Verdict.ERROR, actual="not run: s3cret refused"))
    recorder.result(_result("done", "c.b", Verdict.PASS))
    recorder.phase("done", "done")
    recorder.result(_result("cut", "c.c", Verdict.ERROR, actual="dropped on resuming"))
    await recorder.close()
    _queue_again(engine, run_id)
    second = leases.claim(engine, run_id, "w", 60.0) or 0
    recorder = RunRecorder(GroupWriter(engine), run_id, second, ["s3cret"], prepare_attempt(engine, run_id, second))
    recorder.result(_result("cut", "c.c", Verdict.PASS))
    recorder.result(_result("cut", "c.b", Verdict.ERROR, actual="not exercised: s3cret gone"))
    recorder.result(_result("cut", "c.d", Verdict.ERROR, actual="timed out"))
    recorder.result(_result("cut", "c.d", Verdict.FAIL))  # decided again: no longer an error
    await recorder.close()
    rolled, counts = recorder.rolled()
    mine = [(e.clause_id, str(e.verdict), e.decisive.phase, e.decisive.actual) for e in rolled]
    assert mine == _rows_rolled(engine, run_id)
    assert [entry[:3] for entry in mine] == [
        ("c.a", "error", "done"),  # kept from the first attempt, with its reason
        ("c.b", "pass", "done"),  # a kept pass outranks this attempt's error
        ("c.c", "pass", "cut"),  # its first attempt's error was dropped with the unfinished phase
        ("c.d", "fail", "cut"),
    ]
    assert mine[0][3].startswith("not run: ") and "s3cret" not in mine[0][3]
    assert counts == _stored(engine, run_id)[1] == {"error": 1, "pass": 2, "fail": 1}


async def test_a_transcript_named_again_unchanged_is_not_written_again(database_url: str) -> None:
    """Every clause decided on a connection names its transcript; only one that gained a frame or its close
    since its last batch goes in the next (each write compresses it whole)."""
    engine, run_id = _queued_run(database_url)
    attempt = leases.claim(engine, run_id, "w", 60.0) or 0
    recorder = RunRecorder(GroupWriter(engine), run_id, attempt, (), prepare_attempt(engine, run_id, attempt))
    transcript = Transcript(1, "one", "conn")
    transcript.sent("PING", 4, "ping")
    recorder.transcript(transcript)
    first = recorder.take()
    assert first is not None and [data["frames"][0]["kind"] for data in first.transcripts] == ["PING"]
    recorder.transcript(transcript)  # a second clause's evidence, nothing new on the connection
    recorder.result(_result("one", "c.a", Verdict.PASS))
    unchanged = recorder.take()
    assert unchanged is not None and unchanged.transcripts == [] and len(unchanged.results) == 1
    transcript.closed(1000, "bye", "target")
    recorder.transcript(transcript)
    closed = recorder.take()
    assert closed is not None and [(data["id"], data["closed_by"]) for data in closed.transcripts] == [(1, "target")]
    await recorder.close()


class _Unwritten(GroupWriter):
    """A group writer that writes nothing: the recorder's own bookkeeping, alone."""

    def mark(self, recorder: RunRecorder) -> None:
        pass


def test_the_recorders_running_counts_are_the_rolled_up_counts_of_what_it_was_given() -> None:
    """Counts are kept as results arrive (not rolled up again per batch): after every result they must be
    what rolling the run up from scratch gives, worse verdicts replacing better ones, clauses in many phases."""
    rng = random.Random(31)
    verdicts = list(Verdict)
    for _ in range(30):
        kept = KeptResults(rows={("done", f"c.{n}"): (n + 1, str(rng.choice(verdicts))) for n in range(3)})
        recorder = RunRecorder(_Unwritten(None), 1, 1, (), kept)  # type: ignore[arg-type]
        given = {key: verdict for key, (_, verdict) in kept.rows.items()}
        for _ in range(40):
            key = (rng.choice(["done", "one", "two"]), f"c.{rng.randrange(5)}")
            verdict = rng.choice(verdicts)
            recorder.result(_result(*key, verdict))
            given[key] = str(verdict)
            expected = verdict_counts(roll_up(given.items(), lambda item: (item[0][1], item[1])))
            batch = recorder.take()
            assert batch is not None and batch.counts == {v: n for v, n in expected.items() if n}


async def test_runs_written_in_one_group_get_their_own_row_ids(database_url: str) -> None:
    """One insert adds the results of every run in a group commit; each run must get back its own rows' ids,
    or deciding a clause again would update another run's row (or add a duplicate)."""
    engine, first = _queued_run(database_url)
    with Session(engine) as session:
        second = add_run(session, add_target(session, "u"), {}, status=RunStatus.QUEUED, outcome="").id or 0
    writer = GroupWriter(engine)
    recorders = []
    for run_id in (first, second):
        attempt = leases.claim(engine, run_id, "w", 60.0) or 0
        recorders.append(RunRecorder(writer, run_id, attempt, (), prepare_attempt(engine, run_id, attempt)))
    for number, recorder in enumerate(recorders):  # both in one group commit
        for clause in ("c.a", "c.b", "c.c")[: number + 2]:
            recorder.result(_result("one", clause, Verdict.PASS))
    await asyncio.gather(*(recorder.close() for recorder in recorders))
    recorders[0].result(_result("one", "c.b", Verdict.WARN))
    recorders[1].result(_result("one", "c.a", Verdict.FAIL))
    await asyncio.gather(*(recorder.close() for recorder in recorders))
    assert _stored(engine, first)[0] == [("one", "c.a", "pass", "pass"), ("one", "c.b", "warn", "warn")]
    assert _stored(engine, second)[0] == [
        ("one", "c.a", "fail", "fail"),
        ("one", "c.b", "pass", "pass"),
        ("one", "c.c", "pass", "pass"),
    ]
