"""How a run's decided clauses and transcripts are written: a batch per run, many in one transaction.

`app.recording`'s group writer hands `write_batches` what each run decided
since its last write; each batch is fenced on the attempt that decided it
(`app.leases`), and whatever Python work a batch needs is done before its
transaction, so SQLite's one write lock is held only while statements run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.sql.expression import Executable
from sqlmodel import Session, SQLModel

from app import leases
from app.models import ClauseResultRow, RunStatus, TranscriptRow, compress_json_text, utcnow
from app.models_clause import message_ids
from app.redaction import scrub
from app.textsafe import storable, storable_json
from checks.core import truncate

ResultKey = tuple[str, str]  # (phase, clause id): one stored row per key and run


@dataclass
class Batch:
    """What one run decided since its last write, fenced on the attempt that decided it."""

    run_id: int
    attempt: int
    results: list[dict[str, Any]]
    transcripts: list[dict[str, Any]]
    phase: str | None
    finished_phases: list[str] | None  # all the run finished, when a phase finished since the last write
    counts: dict[str, int]  # the run's clauses per rolled-up verdict, these results included
    row_ids: dict[ResultKey, int] = field(default_factory=dict)  # stored rows these results replace
    secrets: Sequence[str] = ()
    announcement: dict[str, Any] | None = None
    inserted: dict[ResultKey, int] = field(default_factory=dict)  # the rows it added, once committed


_TRANSCRIPT_UPDATED = ("label", "frames", "dropped", "close_code", "close_reason", "closed_by")
_transcript_upserts: dict[str, Executable] = {}  # by dialect name: the statement is built once
# The other statements a batch runs, built once too: building one and its cache key per batch was a
# tenth of the writer's CPU. Without `values()`, what they set is the columns the parameters name.
_RESULTS, _RUNS = SQLModel.metadata.tables[ClauseResultRow.__tablename__], SQLModel.metadata.tables["run"]
_REPLACE_RESULTS = update(_RESULTS).where(_RESULTS.c.id == bindparam("row_id"))
_ADD_RESULTS = insert(_RESULTS).returning(_RESULTS.c.id, sort_by_parameter_order=True)
_HELD = _RUNS.c.id == bindparam("run"), _RUNS.c.status == RunStatus.RUNNING, _RUNS.c.attempts == bindparam("attempt")
_WRITE_PROGRESS = update(_RUNS).where(*_HELD)


def _transcript_values(run_id: int, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "number": data["id"],
        "phase": data["phase"][:64],
        "label": truncate(data["label"], 400),
        "frames": data["frames"],
        "dropped": data["dropped"],
        "close_code": data["close_code"],
        "close_reason": data["close_reason"],
        "closed_by": (data["closed_by"] or None) and data["closed_by"][:16],
    }


def _upsert_transcripts(session: Session, rows: list[dict[str, Any]]) -> None:
    """One `INSERT ... ON CONFLICT (run, number) DO UPDATE` for all of a group's transcripts (`_transcript_values`)."""
    name = session.get_bind().dialect.name
    statement = _transcript_upserts.get(name)
    if statement is None:
        table = SQLModel.metadata.tables[TranscriptRow.__tablename__]
        insert_row = (postgresql if name == "postgresql" else sqlite).insert(table)
        statement = _transcript_upserts[name] = insert_row.on_conflict_do_update(
            index_elements=[table.c.run_id, table.c.number],
            set_={column: insert_row.excluded[column] for column in _TRANSCRIPT_UPDATED},
        )
    session.connection().execute(statement, rows)


def _write_results(session: Session, group: Sequence[_Prepared]) -> list[dict[ResultKey, int]]:
    """Insert the batches' new results and update their stored ones by row id, one statement each for all
    the batches; returns each batch's added row ids.

    No (run, phase, clause) index makes this an upsert (revision 0006 dropped it for its size): a run's
    lease admits one writer, whose recorder knows every row the run holds (`KeptResults`).
    """
    inserted: list[dict[ResultKey, int]] = [{} for _ in group]
    pairs = [(data["expected"], data["actual"]) for one in group for data in one.results]
    if not pairs:
        return inserted
    texts = message_ids(session, pairs)
    decided_at = utcnow()
    added: list[dict[str, Any]] = []
    owners: list[int] = []  # the batch of each added row, by its place in `group`
    replaced: list[dict[str, Any]] = []
    for index, one in enumerate(group):
        for data in one.results:
            values = {
                "level": data["level"],
                "verdict": data["verdict"],
                "message_id": texts[(data["expected"], data["actual"])],
                "duration": data["duration"],
                "checks": data["checks"],
                "transcript_ids": data["transcript_ids"],
                "decided_at": decided_at,
            }
            row_id = one.batch.row_ids.get((data["phase"], data["clause_id"]))
            if row_id is None:
                run = {"run_id": one.batch.run_id, "phase": data["phase"], "clause_id": data["clause_id"]}
                added.append(values | run)
                owners.append(index)
            else:
                replaced.append(values | {"row_id": row_id})
    connection = session.connection()
    if replaced:
        connection.execute(_REPLACE_RESULTS, replaced)
    if added:
        ids = connection.execute(_ADD_RESULTS, added).scalars().all()
        for index, values, row_id in zip(owners, added, ids, strict=True):
            inserted[index][(values["phase"], values["clause_id"])] = row_id
    return inserted


@dataclass
class _Prepared:
    """A batch as its statements take it: masked, storable, its transcripts' frames already compressed."""

    batch: Batch
    results: list[dict[str, Any]]
    transcripts: list[dict[str, Any]]


def _prepared(batch: Batch) -> _Prepared:
    """What a batch writes, made before its transaction: SQLite's one write lock, which the run processes
    share, is then held only while the statements run, not while Python masks and compresses."""
    results, transcripts = batch.results, batch.transcripts
    if batch.secrets:
        results, transcripts = scrub(results, batch.secrets), scrub(transcripts, batch.secrets)
    values = []
    for data in transcripts:
        # The frames' JSON text is written once, to see they are storable and to compress them (as
        # `CompressedJSON` would: it takes bytes as they are); the rest of the transcript is a few strings.
        frames = compress_json_text(storable_json(data["frames"]))
        values.append(_transcript_values(batch.run_id, storable({**data, "frames": []})) | {"frames": frames})
    return _Prepared(batch, storable(results), values)


def _write_group(session: Session, group: Sequence[_Prepared]) -> list[dict[ResultKey, int]]:
    """Write the batches' progress, transcripts and results, a statement or two each for all of them (each
    statement's own cost was most of the writer's); returns each batch's added row ids."""
    _write_progress(session, [one.batch for one in group])
    transcripts = [row for one in group for row in one.transcripts]
    if transcripts:
        _upsert_transcripts(session, transcripts)
    return _write_results(session, group)


def _write_progress(session: Session, batches: Sequence[Batch]) -> None:
    """Each run's progress, only while its batch's attempt holds it: fence and row lock in one statement, for
    all the batches that set the same columns (when the driver counts the rows of such a statement)."""
    alike: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for batch in batches:
        values: dict[str, Any] = {"counts": batch.counts, "decided_clauses": sum(batch.counts.values())}
        if batch.phase is not None:
            values["current_phase"] = batch.phase
        if batch.announcement is not None:
            values["announcement"] = batch.announcement
        if batch.finished_phases is not None:
            values["finished_phases"] = batch.finished_phases
        values |= {"run": batch.run_id, "attempt": batch.attempt}
        alike.setdefault(tuple(values), []).append(values)
    connection = session.connection()
    counted = connection.dialect.supports_sane_multi_rowcount
    for rows in alike.values():
        for statement_rows in [rows] if counted else [[row] for row in rows]:
            if connection.execute(_WRITE_PROGRESS, statement_rows).rowcount != len(statement_rows):
                lost = [f"run {row['run']}: attempt {row['attempt']}" for row in statement_rows]
                # Of a group, the batches are then written one by one, which tells the run that was lost.
                raise leases.LeaseLost(f"{lost[0]} no longer holds it" if len(lost) == 1 else f"one of {lost} lost")


def write_batches(engine: Engine, batches: Sequence[Batch]) -> dict[int, BaseException]:
    """Commit every batch in one transaction (a group commit); returns the errors by run id.

    When the group fails, each batch is written alone, so one run whose lease
    was lost (or whose data the database refuses) costs only that run. A
    batch's `inserted` ids are set only once they are committed.
    """
    errors: dict[int, BaseException] = {}
    prepared = []
    for batch in batches:
        try:
            prepared.append(_prepared(batch))
        except Exception as exc:  # what cannot be made storable costs only its run
            errors[batch.run_id] = exc
    try:
        with Session(engine) as session:
            added = _write_group(session, prepared)
            session.commit()
        for one, ids in zip(prepared, added, strict=True):
            one.batch.inserted = ids
        return errors
    except Exception:
        if len(prepared) == 1:
            raise
    for one in prepared:
        try:
            with Session(engine) as session:
                ids = _write_group(session, [one])[0]
                session.commit()
            one.batch.inserted = ids
        except Exception as exc:
            errors[one.batch.run_id] = exc
    return errors
