"""What a fleet's database keeps: at most `retention_runs` ended runs per target, transcripts whole where they matter.

Every run that failed, errored or warned keeps its transcripts whole, and so do the latest
`whole_passing` clean passing runs of each target; an older clean passing run keeps each
transcript as a summary (label, close, how many frames it had) beside its clause results, which
are kept for every run. Each run's end applies this to its target (`EndWriter`); `sweep` applies
it to every target, those that stopped running too, and returns the freed pages on SQLite (on
PostgreSQL it vacuums the tables it changed, so their freed space is reused).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import delete, func, insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud
from app.db import release_free_pages, vacuum_retained_tables
from app.history import conformance_runs
from app.models import ENDED_STATUSES, Run, RunStatus, Target, TranscriptRow
from checks.core import Outcome, Verdict

log = logging.getLogger("rlconform")

# A run with any of these verdicts keeps its transcripts whole, whatever its outcome.
KEPT_WHOLE_VERDICTS = {str(Verdict.FAIL), str(Verdict.WARN), str(Verdict.ERROR)}
SUMMARY_BATCH = 100  # runs summarised per statement


def clean_pass(outcome: Outcome | None, counts: Mapping[str, int]) -> bool:
    """A run whose transcripts may become summaries once newer clean passing runs exist."""
    return outcome == Outcome.PASS and not any(counts.get(verdict) for verdict in KEPT_WHOLE_VERDICTS)


def runs_to_summarise(session: Session, target_id: int, whole_passing: int) -> list[int]:
    """The target's clean passing runs older than its latest `whole_passing` ones that still hold whole transcripts."""
    passing = session.exec(
        select(Run.id, Run.counts)
        .where(Run.target_id == target_id, Run.status == RunStatus.FINISHED, Run.outcome == Outcome.PASS)
        .where(conformance_runs())
        .order_by(col(Run.created_at).desc(), col(Run.id).desc())
    ).all()
    older = [run_id for run_id, counts in passing if run_id is not None and clean_pass(Outcome.PASS, counts)]
    older = older[whole_passing:]
    if not older:
        return []
    whole = select(TranscriptRow.run_id).where(
        col(TranscriptRow.run_id).in_(older), col(TranscriptRow.summarised).is_(False)
    )
    return sorted(set(session.exec(whole.distinct()).all()))


def summarise_runs(session: Session, run_ids: list[int]) -> int:
    """Turn the whole transcripts of `run_ids` into summaries (no commit); returns how many transcripts.

    Each is deleted and written anew rather than updated in place: a run's transcripts were written
    together, so deleting them empties whole pages the database can give back, and the summaries
    pack densely at the end; shrunk in place they would leave most of every page unused.
    (Results name transcripts by their number in the run, the key with the run's id.)
    """
    changed = 0
    for start in range(0, len(run_ids), SUMMARY_BATCH):
        batch = run_ids[start : start + SUMMARY_BATCH]
        whole = session.exec(
            select(TranscriptRow)
            .where(col(TranscriptRow.run_id).in_(batch), col(TranscriptRow.summarised).is_(False))
            .order_by(col(TranscriptRow.run_id), col(TranscriptRow.number))
        ).all()
        summaries = [
            row.model_dump() | {"frames": [], "dropped": row.dropped + len(row.frames), "summarised": True}
            for row in whole
        ]
        if not summaries:
            continue
        # The same rows as `whole`: these runs have ended, nothing else writes their transcripts.
        session.exec(
            delete(TranscriptRow).where(col(TranscriptRow.run_id).in_(batch), col(TranscriptRow.summarised).is_(False))
        )
        session.execute(insert(TranscriptRow), summaries)
        changed += len(summaries)
    return changed


def apply_to_target(session: Session, target_id: int, retention_runs: int, whole_passing: int) -> tuple[int, int]:
    """Prune the target's oldest ended runs and summarise its older clean passing runs (no commit).

    Returns (runs deleted, transcripts summarised).
    """
    pruned = prune_runs(session, target_id, retention_runs, commit=False)
    summarised = summarise_runs(session, runs_to_summarise(session, target_id, whole_passing))
    return pruned, summarised


@dataclass
class SweepResult:
    targets: int = 0
    runs_deleted: int = 0
    transcripts_summarised: int = 0
    pages_freed: int = 0


def sweep(engine: Engine, retention_runs: int, whole_passing: int) -> SweepResult:
    """Apply retention to every target, one transaction each, then give the freed space back (SQLite)."""
    result = SweepResult()
    with Session(engine) as session:
        target_ids = [target_id for target_id in session.exec(select(Target.id)).all() if target_id is not None]
    for target_id in target_ids:
        with Session(engine) as session:
            pruned, summarised = apply_to_target(session, target_id, retention_runs, whole_passing)
            session.commit()
        result.targets += 1
        result.runs_deleted += pruned
        result.transcripts_summarised += summarised
    if result.runs_deleted or result.transcripts_summarised:
        vacuum_retained_tables(engine)
    result.pages_freed = release_free_pages(engine)
    if result.runs_deleted or result.transcripts_summarised:
        log.info(
            "retention: %d run(s) deleted, %d transcript(s) summarised, %d page(s) freed",
            result.runs_deleted,
            result.transcripts_summarised,
            result.pages_freed,
        )
    return result


def prune_runs(session: Session, target_id: int, keep: int, *, commit: bool = True) -> int:
    """Delete the target's oldest ended runs beyond `keep`; returns how many went."""
    ended = [str(s) for s in ENDED_STATUSES]
    total = session.exec(
        select(func.count()).select_from(Run).where(Run.target_id == target_id, col(Run.status).in_(ended))
    ).one()
    if total <= keep:
        return 0
    old_ids = list(
        session.exec(
            select(Run.id)
            .where(Run.target_id == target_id, col(Run.status).in_(ended))
            .order_by(col(Run.created_at), col(Run.id))
            .limit(total - keep)
        )
    )
    crud.delete_runs(session, old_ids)
    if commit:
        session.commit()
    return len(old_ids)
