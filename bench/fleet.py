"""Fleet bench: a database of 200 targets x 500 runs, every page's server time and the database's size.

First it records real runs once: the service starts its demo reference servers, runs each demo
target's suite through the API and keeps those runs (clause results and transcripts) as stored.
Then it builds the fleet as a faithful bulk copy of them: each target copies the recorded run of
its kind, every tenth run with one clause failing (so it keeps its transcripts whole), with the
service's own tables and column types (transcripts compressed as the service stores them) and,
after each target's runs, the service's own retention (`app.retention.apply_to_target`, what a
run's end applies), then the freed pages are returned. Finally it times every page through the
ASGI app (median of several requests) and prints each against 150 ms, and the database size
against 2 GB, as ratios (below 1.0 meets the goal).

    python bench/fleet.py [--targets 200] [--runs 500] [--database-url URL] [--requests 5]

Without --database-url it uses a temporary SQLite file; a PostgreSQL URL must name an empty
database. Scaled down, it also prints the size extrapolated linearly to 200 x 500, labelled so
(exact in the number of targets when it is a multiple of the recorded kinds and --runs is 500).
On PostgreSQL the tables are vacuumed after each target, as autovacuum would have done in the days
its runs take (revision 0006 starts it every 10,000 dead rows); otherwise the size is as built.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import insert, text
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app import retention  # noqa: E402
from app.db import make_engine, release_free_pages, upgrade_database, vacuum_retained_tables  # noqa: E402
from app.main import create_app  # noqa: E402
from app.models import ClauseResultRow, Run, RunStatus, Target, TranscriptRow, utcnow  # noqa: E402
from app.models_clause import message_id  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.service import median_ms  # noqa: E402
from checks.core import Outcome  # noqa: E402

PAGE_TARGET_MS = 150.0
SIZE_TARGET_BYTES = 2 * 1024**3
FULL_TARGETS, FULL_RUNS = 200, 500
FAIL_EVERY = 10  # one run in ten fails a clause: it keeps its transcripts whole
WHOLE_PASSING = Settings.model_fields["retention_whole_passing"].default
RECORD_KINDS: tuple[str, ...] = ()  # empty: every kind the service has a demo server for
RUN_COLUMNS = ("phases", "options", "kind", "url", "gate", "expected_failures", "harness_version", "spec_version")
RESULT_COLUMNS = (
    "phase",
    "clause_id",
    "level",
    "verdict",
    "expected",
    "actual",
    "duration",
    "checks",
    "transcript_ids",
)
TRANSCRIPT_COLUMNS = ("number", "phase", "label", "frames", "dropped", "close_code", "close_reason", "closed_by")


@dataclass
class Recorded:
    """One real run as the service stored it."""

    kind: str
    url: str
    run: dict[str, Any]
    results: list[dict[str, Any]]
    transcripts: list[dict[str, Any]]


# ---------------------------------------------------------------- real runs, recorded once


def record_real_runs(workdir: Path, timeout: float = 120.0) -> list[Recorded]:
    """One finished run of each demo target of RECORD_KINDS, through the service's API."""
    url = f"sqlite:///{workdir / 'recording.db'}"
    settings = Settings(database_url=url, demo=True, scheduler_interval=3600)
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        targets = [t for t in client.get("/api/v1/targets").json() if not RECORD_KINDS or t["kind"] in RECORD_KINDS]
        started = [client.post(f"/api/v1/targets/{t['name']}/runs", json={}).json()["id"] for t in targets]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            statuses = [client.get(f"/api/v1/runs/{run_id}").json()["status"] for run_id in started]
            if all(status not in ("queued", "running") for status in statuses):
                break
            time.sleep(0.2)
    recorded = []
    with Session(make_engine(url)) as session:
        for run in session.exec(select(Run).where(col(Run.id).in_(started), Run.status == RunStatus.FINISHED)):
            results = session.exec(select(ClauseResultRow).where(ClauseResultRow.run_id == run.id)).all()
            transcripts = session.exec(select(TranscriptRow).where(TranscriptRow.run_id == run.id)).all()
            recorded.append(
                Recorded(
                    kind=run.kind,
                    url=run.url,
                    run={name: getattr(run, name) for name in RUN_COLUMNS} | {"counts": run.counts},
                    results=[{name: getattr(row, name) for name in RESULT_COLUMNS} for row in results],
                    transcripts=[{name: getattr(row, name) for name in TRANSCRIPT_COLUMNS} for row in transcripts],
                )
            )
    if not recorded:
        raise SystemExit("no demo run finished: nothing to build the fleet from")
    return recorded


# ---------------------------------------------------------------- the fleet, a bulk copy of them


def _failing_copy(source: Recorded) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The recorded run with its first passing clause failing: the run and its results."""
    results = copy.deepcopy(source.results)
    for result in results:
        if result["verdict"] == "pass":
            result["verdict"], result["actual"] = "fail", "a reply the clause does not allow"
            break
    counts: dict[str, int] = {}
    for result in results:
        counts[result["verdict"]] = counts.get(result["verdict"], 0) + 1
    return {**source.run, "counts": counts, "outcome": Outcome.FAIL}, results


def _stored_result(session: Session, result: dict[str, Any]) -> dict[str, Any]:
    """A recorded result as the service writes it: its texts by their id in `clause_message`."""
    texts = {name: result[name] for name in ("expected", "actual")}
    return {name: value for name, value in result.items() if name not in texts} | {
        "message_id": message_id(session, texts["expected"], texts["actual"])
    }


def _insert_runs(session: Session, target: Target, source: Recorded, runs: int, first: int) -> None:
    """`runs` finished runs copying `source`, ten minutes apart, ending now; retention applied after."""
    failing_run, failing_results = _failing_copy(source)
    passing_run = {**source.run, "outcome": source.run.get("outcome") or Outcome.PASS}
    end = utcnow()
    for index in range(runs):
        failing = (first + index) % FAIL_EVERY == FAIL_EVERY - 1
        created = end - timedelta(minutes=10 * (runs - index))
        values = failing_run if failing else passing_run
        run = Run(
            target_id=target.id,
            status=RunStatus.FINISHED,
            trigger="schedule",
            created_at=created,
            started_at=created,
            finished_at=created + timedelta(seconds=20),
            total_clauses=len(source.results),
            decided_clauses=len(source.results),
            worker_label=target.worker_label,
            **{name: value for name, value in values.items() if name != "outcome"},
            outcome=values["outcome"],
        )
        session.add(run)
        session.flush()
        results = failing_results if failing else source.results
        rows = [_stored_result(session, row) | {"run_id": run.id, "decided_at": created} for row in results]
        session.execute(insert(ClauseResultRow), rows)
        if source.transcripts:
            session.execute(insert(TranscriptRow), [{**row, "run_id": run.id} for row in source.transcripts])


def build_fleet(engine: Engine, recorded: list[Recorded], targets: int, runs: int, batch: int = 50) -> None:
    for number in range(targets):
        source = recorded[number % len(recorded)]
        with Session(engine) as session:
            target = Target(name=f"fleet-{number:03d}", kind=source.kind, url=source.url, schedule_minutes=10)
            session.add(target)
            session.commit()
            session.refresh(target)
            for first in range(0, runs, batch):
                _insert_runs(session, target, source, min(batch, runs - first), first)
                # What each run's end does for its target (EndWriter), once per batch here.
                retention.apply_to_target(session, target.id or 0, FULL_RUNS, WHOLE_PASSING)
                session.commit()
        # On PostgreSQL, what autovacuum does while a target's 500 runs take their days (revision 0006 has
        # it start every 10,000 dead rows, some minutes of a fleet's runs): the next target reuses the space.
        vacuum_retained_tables(engine)
        if number % 20 == 19:
            print(f"  {number + 1} targets built", flush=True)
    release_free_pages(engine)


# ---------------------------------------------------------------- measuring


def database_bytes(engine: Engine) -> int:
    with engine.connect() as connection:
        if engine.dialect.name == "postgresql":
            return int(connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one())
        connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        path = Path(engine.url.database or "")
        return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def pages(engine: Engine) -> list[str]:
    """Every page a fleet's user reads, with ids taken from the fleet."""
    with Session(engine) as session:
        target = session.exec(select(Target).order_by(col(Target.id))).first()
        assert target is not None
        of_target = select(Run.id).where(Run.target_id == target.id).order_by(col(Run.id).desc())
        newest = session.exec(of_target).first()
        failing = session.exec(of_target.where(Run.outcome == Outcome.FAIL, col(Run.id) != newest)).first()
        highest = session.exec(select(Run.id).order_by(col(Run.id).desc())).first() or 0
        clause = session.exec(select(ClauseResultRow).where(ClauseResultRow.run_id == newest)).first()
        assert clause is not None
        # The grids' sizes differ by kind (clauses per suite): every kind's matrix and one target page of each.
        first_of_kind = {}
        for name, kind in session.exec(select(Target.name, Target.kind).order_by(col(Target.id))):
            first_of_kind.setdefault(kind, name)
    others = [
        path
        for kind, name in sorted(first_of_kind.items())
        if kind != target.kind
        for path in (f"/matrix/{kind}", f"/targets/{name}")
    ]
    return [
        "/",
        "/runs",
        f"/runs?before={highest // 2}",
        f"/runs?target={target.name}",
        "/runs?status=finished&outcome=fail",
        "/matrix",
        f"/matrix/{target.kind}",
        f"/targets/{target.name}",
        f"/runs/{newest}",
        f"/runs/{failing}",
        f"/runs/{newest}/clauses/{clause.phase}/{clause.clause_id}",
        f"/runs/{newest}/diff?against=previous",
        "/api/v1/runs",
        f"/api/v1/targets/{target.name}/history",
        f"/api/v1/runs/{newest}/results",
        *others,
    ]


def ratio_line(what: str, value: float, unit: str, goal: float) -> str:
    return f"{what:60.60} {value:8.1f} {unit}  goal <= {goal:.0f} {unit}  ratio {value / goal:.2f}"


def counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        tables = ("target", "run", "clause_result", "clause_message", "transcript")
        found = {name: int(connection.execute(text(f"SELECT count(*) FROM {name}")).scalar_one()) for name in tables}
        found["whole transcripts"] = int(
            connection.execute(text("SELECT count(*) FROM transcript WHERE NOT summarised")).scalar_one()
        )
    return found


def measure_pages(url: str, engine: Engine, requests: int) -> None:
    settings = Settings(database_url=url, demo=False, scheduler_interval=3600)
    worst = 0.0
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        for path in pages(engine):
            ms = median_ms(client, path, requests)
            worst = max(worst, ms)
            print(ratio_line(f"{path} (median)", ms, "ms", PAGE_TARGET_MS))
    print(ratio_line("worst page", worst, "ms", PAGE_TARGET_MS))


def report_size(engine: Engine, targets: int, runs: int, empty_bytes: int) -> None:
    """The size as built; scaled down, also extrapolated: the whole size, and the growth over the empty schema."""
    mb = database_bytes(engine) / 1024**2
    goal = SIZE_TARGET_BYTES / 1024**2
    print(ratio_line(f"database, {targets} x {runs}", mb, "MB", goal))
    if (targets, runs) != (FULL_TARGETS, FULL_RUNS):
        scale = (FULL_TARGETS * FULL_RUNS) / (targets * runs)
        # Linear in targets is exact for whole cycles of the recorded kinds; fewer runs than the cap
        # overstate it (a larger share of them keeps whole transcripts).
        label = "EXTRAPOLATED linearly" + ("" if runs == FULL_RUNS else ", overstated: fewer runs than the cap")
        print(ratio_line(f"database, {FULL_TARGETS} x {FULL_RUNS} {label}", mb * scale, "MB", goal))
        # The empty schema (catalogs, procrastinate's tables) does not grow with the fleet.
        empty = empty_bytes / 1024**2
        print(
            ratio_line(
                f"  the same, scaling only the growth over the empty {empty:.0f} MB",
                empty + (mb - empty) * scale,
                "MB",
                goal,
            )
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", type=int, default=FULL_TARGETS)
    parser.add_argument("--runs", type=int, default=FULL_RUNS, help="runs per target (the retention cap is 500)")
    parser.add_argument("--database-url", default="", help="an empty PostgreSQL database; default: temporary SQLite")
    parser.add_argument("--requests", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None, help="build in this directory and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rlconform-fleet-") as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        began = time.perf_counter()
        recorded = record_real_runs(workdir)
        for source in recorded:
            frames = sum(len(json.dumps(t["frames"])) for t in source.transcripts) / 1024
            print(
                f"recorded {source.kind}: {len(source.results)} clause results, {len(source.transcripts)} transcripts"
            )
            print(f"  ({frames:.0f} KB of frames as JSON)")
        print(f"recorded in {time.perf_counter() - began:.1f} s")
        url = args.database_url or f"sqlite:///{workdir / 'fleet.db'}"
        upgrade_database(url)
        engine = make_engine(url)
        empty_bytes = database_bytes(engine)
        began = time.perf_counter()
        build_fleet(engine, recorded, args.targets, args.runs)
        elapsed = time.perf_counter() - began
        print(f"built {args.targets} x {args.runs} on {engine.dialect.name} in {elapsed:.0f} s: {counts(engine)}")
        measure_pages(url, engine, args.requests)
        report_size(engine, args.targets, args.runs, empty_bytes)
        engine.dispose()


if __name__ == "__main__":
    main()
