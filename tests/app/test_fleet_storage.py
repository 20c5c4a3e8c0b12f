"""Fleet scale: the per-target page queries, retention of transcripts and the space SQLite gives back.

On SQLite, and on PostgreSQL when one is configured (the per-target query is LATERAL there).
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlmodel import Session, select

from app import retention
from app.db import enable_incremental_vacuum, make_engine, release_free_pages, upgrade_database
from app.history import kind_matrix, latest_runs_per_target
from app.models import ParityRun, Run, RunStatus, Target, TranscriptRow
from tests.app.constructed import add_run, add_target, client_session, settings_on_each_backend  # noqa: F401 -- fixtures

FRAMES = [{"direction": "sent", "t": 0.0, "size": 9, "kind": "text", "summary": "x" * 300}] * 4


def _runs(session: Session, target: Target, outcomes: list[str], *, transcripts: int = 0) -> list[Run]:
    """Runs with these outcomes, a second apart (oldest first), each with `transcripts` of FRAMES."""
    runs = []
    for index, outcome in enumerate(outcomes):
        verdict = {"pass": "pass", "warn": "warn", "fail": "fail", "queued": "pass"}[outcome]
        status = RunStatus.QUEUED if outcome == "queued" else RunStatus.FINISHED
        run = add_run(
            session, target, {("p", "c.one"): verdict}, status=status, outcome="" if status == "queued" else None
        )
        run.created_at = run.created_at.replace(microsecond=0) + timedelta(seconds=index)
        run.counts = {verdict: 1}
        session.add(run)
        for number in range(1, transcripts + 1):
            session.add(TranscriptRow(run_id=run.id, number=number, phase="p", label=f"conn {number}", frames=FRAMES))
        session.commit()
        session.refresh(run)
        runs.append(run)
    return runs


def test_each_target_gets_its_own_latest_runs_oldest_first(client: TestClient, session: Session) -> None:
    busy, quiet = add_target(session, "busy"), add_target(session, "quiet")
    busy_runs = _runs(session, busy, ["pass"] * 6 + ["queued"])
    quiet_runs = _runs(session, quiet, ["fail", "pass"])
    session.add(ParityRun(run_id=busy_runs[5].id, second_name="other"))  # a parity run is no conformance run
    session.commit()

    latest = latest_runs_per_target(session, 3)
    assert [run.id for run in latest[busy.id]] == [busy_runs[3].id, busy_runs[4].id, busy_runs[6].id]
    assert [run.id for run in latest[quiet.id]] == [run.id for run in quiet_runs]
    assert set(latest[busy.id][0]._fields) == {"id", "target_id", "status", "outcome", "created_at", "finished_at"}

    finished = latest_runs_per_target(session, 1, finished_only=True)
    assert [run.id for run in finished[busy.id]] == [busy_runs[4].id]
    columns, _, cells = kind_matrix(session, "constructed")
    assert [(target.name, run.id) for target, run in columns] == [
        ("busy", busy_runs[4].id),
        ("quiet", quiet_runs[1].id),
    ]
    assert cells[(busy_runs[4].id, "c.one")]["verdict"] == "pass"

    overview = client.get("/").text
    assert f'href="/runs/{busy_runs[6].id}"' in overview and f'href="/runs/{quiet_runs[1].id}"' in overview
    assert f'href="/runs/{busy_runs[4].id}"' in client.get("/matrix/constructed").text


def test_retention_keeps_failing_warning_and_the_latest_passing_transcripts_whole(
    client: TestClient, session: Session
) -> None:
    target = add_target(session)
    runs = _runs(session, target, ["pass", "fail", "warn", "pass", "pass", "pass"], transcripts=2)

    result = retention.sweep(session.get_bind(), retention_runs=500, whole_passing=2)  # type: ignore[arg-type]
    assert result.transcripts_summarised == 2 * 2 and result.runs_deleted == 0
    session.expire_all()
    by_run = {run.id: session.exec(select(TranscriptRow).where(TranscriptRow.run_id == run.id)).all() for run in runs}
    summarised = [run.id for run in runs if all(row.summarised for row in by_run[run.id])]
    assert summarised == [runs[0].id, runs[3].id]  # older clean passes; the fail and the warn stay whole
    for run in runs:
        for row in by_run[run.id]:
            if run.id in summarised:
                assert row.frames == [] and row.dropped == len(FRAMES) and row.label.startswith("conn")
            else:
                assert row.frames == FRAMES and not row.summarised
    summary = client.get(f"/api/v1/runs/{runs[0].id}/transcripts/1").json()
    assert summary["summarised"] is True and summary["frames"] == [] and summary["label"] == "conn 1"
    assert client.get(f"/api/v1/runs/{runs[1].id}/transcripts/1").json()["frames"] == FRAMES
    again = retention.sweep(session.get_bind(), retention_runs=500, whole_passing=2)  # type: ignore[arg-type]
    assert again.transcripts_summarised == 0


def test_retention_prunes_a_target_that_stopped_running(session: Session) -> None:
    idle = add_target(session, "idle")
    runs = _runs(session, idle, ["pass"] * 5, transcripts=1)
    result = retention.sweep(session.get_bind(), retention_runs=3, whole_passing=10)  # type: ignore[arg-type]
    assert result.runs_deleted == 2
    left = session.exec(select(Run.id).where(Run.target_id == idle.id).order_by(Run.id)).all()
    assert left == [run.id for run in runs[2:]]
    assert session.exec(select(TranscriptRow.run_id).order_by(TranscriptRow.run_id)).all() == left


def test_sqlite_gives_pruned_pages_back_to_the_file_system(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fleet.db'}"
    upgrade_database(url)
    engine = make_engine(url)
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2  # incremental from the start
    with Session(engine) as session:
        session.add(target := Target(name="t", kind="constructed", url="ws://127.0.0.1:9"))
        session.commit()
        run = Run(target_id=target.id, kind="constructed", url="", harness_version="1", spec_version="1")
        session.add(run)
        session.commit()
        big = [{"summary": str(index) * 2000} for index in range(2000)]  # compresses poorly enough to fill pages
        session.add_all(TranscriptRow(run_id=run.id, number=n, phase="p", label="", frames=big) for n in range(20))
        session.commit()
    with engine.connect() as connection:
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        filled = connection.exec_driver_sql("PRAGMA page_count").scalar()
        connection.execute(text("DELETE FROM transcript"))
        connection.commit()
    assert release_free_pages(engine) > 0
    with engine.connect() as connection:
        emptied = connection.exec_driver_sql("PRAGMA page_count").scalar()
        assert connection.exec_driver_sql("PRAGMA freelist_count").scalar() == 0
    assert emptied < filled / 2


def test_an_sqlite_file_made_before_incremental_vacuum_is_converted_at_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE kept (value TEXT)")
        old.execute("INSERT INTO kept VALUES ('still here')")
    url = f"sqlite:///{path}"
    upgrade_database(url)
    with sqlite3.connect(path) as converted:
        assert converted.execute("PRAGMA auto_vacuum").fetchone() == (2,)
        assert converted.execute("SELECT value FROM kept").fetchall() == [("still here",)]
    assert enable_incremental_vacuum(make_engine(url))
