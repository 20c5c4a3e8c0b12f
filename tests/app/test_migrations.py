"""Alembic revisions: one linear chain, and an upgrade keeps every stored target, run and clause result.

Rows are written with plain SQL against the schema of the older revision (reflected, not the current
models), so the test stays valid as the models move on. The per-revision test has one case per revision
after the first: it is empty while there is a single revision and runs as soon as a second one lands.
PostgreSQL is covered too when RLCONFORM_TEST_POSTGRES_URL is set (the `database_url` fixture).
"""

from __future__ import annotations

import zlib
from datetime import UTC, datetime
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.script import Script, ScriptDirectory
from sqlalchemy.engine import Connection

from app.db import alembic_config, make_engine

# Parents before children: clause results and transcripts point at runs, runs at targets.
FILLED_TABLES = ("target", "run", "clause_result", "transcript")
ROWS = {"target": 2, "run": 3, "clause_result": 4, "transcript": 2}  # per parent row
KNOWN_VALUES = {
    "status": "finished",
    "outcome": "pass",
    "gate": "default",
    "verdict": "pass",
    "level": "MUST",
    "kind": "constructed",
    "url": "ws://127.0.0.1:9",
}


def _chain() -> list[Script]:
    """The revisions from the first to the head."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return list(reversed(list(script.walk_revisions())))


def _upgrade(url: str, revision: str) -> None:
    with make_engine(url).begin() as connection:
        config = alembic_config(url)
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


def _downgrade(url: str, revision: str) -> None:
    with make_engine(url).begin() as connection:
        config = alembic_config(url)
        config.attributes["connection"] = connection
        command.downgrade(config, revision)


def _value(column: sa.Column[Any], index: int, parent_id: int | None) -> Any:
    """A storable value for `column`, unique per row where the schema may ask for it."""
    if any(key.target_fullname == "clause_message.id" for key in column.foreign_keys):  # from 0008 on
        return 1  # the one pair `_fill` adds first
    if column.foreign_keys:
        return parent_id
    if column.name in KNOWN_VALUES:
        return KNOWN_VALUES[column.name]
    kind = column.type
    if isinstance(kind, sa.JSON):
        return []
    if isinstance(kind, sa.DateTime):
        return datetime.now(UTC)
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.Integer):
        return index
    if isinstance(kind, sa.Float | sa.Numeric):
        return 0.0
    if isinstance(kind, sa.LargeBinary):  # transcript frames from 0005 on: zlib-compressed JSON
        return zlib.compress(b"[]")
    return f"{column.name}-{index}"


def _insert(connection: Connection, table_name: str, index: int, parent_id: int | None) -> int:
    table = sa.Table(table_name, sa.MetaData(), autoload_with=connection)
    values = {
        column.name: _value(column, index, parent_id)
        for column in table.columns
        # every column but a surrogate id: from 0006 on a transcript's key is (run_id, number)
        if not (column.primary_key and column.name == "id") and (not column.nullable or column.foreign_keys)
    }
    if "id" not in table.columns:  # transcripts from 0006 on: keyed by (run_id, number), parent of nothing
        connection.execute(sa.insert(table).values(**values))
        return 0
    result = connection.execute(sa.insert(table).values(**values).returning(table.c.id))
    return int(result.scalar_one())


def _fill(url: str) -> dict[str, int]:
    """Targets with runs, each run with clause results and transcripts; returns the row count per table."""
    with make_engine(url).begin() as connection:
        if "clause_message" in sa.inspect(connection).get_table_names():
            _insert(connection, "clause_message", 1, None)
        for t in range(ROWS["target"]):
            target_id = _insert(connection, "target", t, None)
            for r in range(ROWS["run"]):
                run_id = _insert(connection, "run", r, target_id)
                for c in range(ROWS["clause_result"]):
                    _insert(connection, "clause_result", c, run_id)
                for n in range(ROWS["transcript"]):
                    _insert(connection, "transcript", n, run_id)
    return _counts(url)


def _counts(url: str) -> dict[str, int]:
    with make_engine(url).connect() as connection:
        return {
            name: connection.execute(sa.text(f"SELECT count(*) FROM {name}")).scalar_one() for name in FILLED_TABLES
        }


def test_the_revisions_form_one_linear_chain() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert len(script.get_heads()) == 1, f"more than one head: {script.get_heads()}"
    assert len(script.get_bases()) == 1, f"more than one base: {script.get_bases()}"
    chain = _chain()
    assert chain[0].down_revision is None
    for parent, child in zip(chain, chain[1:], strict=False):
        assert child.down_revision == parent.revision, f"{child.revision} does not follow {parent.revision}"
        assert not child.is_merge_point and not parent.is_branch_point
    assert chain[-1].revision == script.get_current_head()


def test_a_filled_database_at_the_first_revision_upgrades_to_head_with_every_row(database_url: str) -> None:
    _upgrade(database_url, _chain()[0].revision)
    before = _fill(database_url)
    assert before["run"] == ROWS["target"] * ROWS["run"]
    _upgrade(database_url, "head")
    assert _counts(database_url) == before


@pytest.mark.parametrize("revision", [script.revision for script in _chain()[1:]])
def test_upgrading_a_filled_database_to_each_revision_keeps_every_row(database_url: str, revision: str) -> None:
    parent = next(script.down_revision for script in _chain() if script.revision == revision)
    assert isinstance(parent, str)
    _upgrade(database_url, parent)
    before = _fill(database_url)
    _upgrade(database_url, revision)
    assert _counts(database_url) == before
    _upgrade(database_url, "head")
    assert _counts(database_url) == before


FRAMES = [
    {"direction": "sent", "t": 0.0, "size": 12, "kind": "text", "summary": '{"op": "reset"} é'},
    {"direction": "received", "t": 0.01, "size": 30, "kind": "text", "summary": '{"observation": [1, 2]}'},
]


def test_revision_0005_compresses_every_transcript_and_keeps_its_frames(database_url: str) -> None:
    """Frames written as JSON at 0004 read back equal through the model after 0005, none marked summarised."""
    from sqlmodel import Session, select

    from app.models import TranscriptRow

    _upgrade(database_url, "0004")
    before = _fill(database_url)
    with make_engine(database_url).begin() as connection:
        table = sa.Table("transcript", sa.MetaData(), autoload_with=connection)
        connection.execute(sa.update(table).values(frames=FRAMES))
    _upgrade(database_url, "0005")
    assert _counts(database_url) == before
    with Session(make_engine(database_url)) as session:
        rows = session.exec(select(TranscriptRow)).all()
    assert len(rows) == before["transcript"]
    assert all(row.frames == FRAMES and not row.summarised for row in rows)
    with make_engine(database_url).connect() as connection:
        stored = connection.execute(sa.text("SELECT frames FROM transcript")).scalars().all()
    assert all(isinstance(value, bytes | memoryview) and bytes(value[:1]) == b"\x78" for value in stored)


def test_revision_0006_slims_the_result_and_transcript_keys_and_vacuums_after_fixed_dead_rows(
    database_url: str,
) -> None:
    """Results indexed by `run_id` alone, transcripts keyed by (run, number); PostgreSQL: autovacuum thresholds."""
    _upgrade(database_url, "0005")
    before = _fill(database_url)
    _upgrade(database_url, "0006")
    assert _counts(database_url) == before
    with make_engine(database_url).connect() as connection:
        inspector = sa.inspect(connection)
        indexes = {index["name"]: index["column_names"] for index in inspector.get_indexes("clause_result")}
        assert indexes.get("ix_clause_result_run_id") == ["run_id"]
        assert not [u for u in inspector.get_unique_constraints("clause_result") if "phase" in u["column_names"]]
        assert not [name for name, columns in indexes.items() if "clause_id" in columns]
        transcript_key = inspector.get_pk_constraint("transcript")["constrained_columns"]
        assert transcript_key == ["run_id", "number"]
        assert "id" not in [column["name"] for column in inspector.get_columns("transcript")]
        if connection.dialect.name == "postgresql":
            tables = "('transcript', 'clause_result', 'run')"
            options = connection.execute(sa.text(f"SELECT relname, reloptions FROM pg_class WHERE relname IN {tables}"))
            assert {name: sorted(opts or []) for name, opts in options} == {
                name: ["autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=10000"]
                for name in ("transcript", "clause_result", "run")
            }
    _downgrade(database_url, "0005")  # and back: the unique index returns
    assert _counts(database_url) == before
    with make_engine(database_url).connect() as connection:
        inspector = sa.inspect(connection)
        uniques = inspector.get_unique_constraints("clause_result")
        assert [u["column_names"] for u in uniques] == [["run_id", "phase", "clause_id"]]
        assert inspector.get_pk_constraint("transcript")["constrained_columns"] == ["id"]
        numbers = connection.execute(sa.text("SELECT id FROM transcript ORDER BY id")).scalars().all()
        assert len(set(numbers)) == before["transcript"] and None not in numbers


TAP_TABLES = ("tap_target", "tap_window")


def test_revision_0007_adds_the_tap_tables_as_the_models_have_them_and_its_downgrade_keeps_every_row(
    database_url: str,
) -> None:
    """0007 creates exactly the columns `app.models_tap` declares; downgrading to 0006 drops only the tap tables."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlmodel import SQLModel

    import app.models_tap  # noqa: F401  (the tap tables on the metadata)

    _upgrade(database_url, "0006")
    before = _fill(database_url)
    _upgrade(database_url, "0007")
    with make_engine(database_url).begin() as connection:
        target_id = connection.execute(sa.text("SELECT min(id) FROM target")).scalar_one()
        run_id = connection.execute(sa.text("SELECT min(id) FROM run")).scalar_one()
        _insert_plain(connection, "tap_target", {"target_id": target_id, "listen": "", "tap_options": "{}"})
        window = {"run_id": run_id, "session_id": "s", "number": 1, "listen_url": "", "ledger": "{}"}
        _insert_plain(connection, "tap_window", window | {"messages_per_second": 0.0, "unjudged": 0, "closed": False})
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    about_taps = [d for d in differences if any(name in repr(d) for name in TAP_TABLES)]
    if connection.dialect.name == "postgresql":  # 0007 left out its time zone there; 0008 adds it
        about_taps = [d for d in about_taps if "'modify_type', None, 'tap_window', 'updated_at'" not in repr(d)]
    assert about_taps == [], about_taps
    assert _counts(database_url) == before
    _downgrade(database_url, "0006")
    with make_engine(database_url).connect() as connection:
        assert not set(TAP_TABLES) & set(sa.inspect(connection).get_table_names())
    assert _counts(database_url) == before


def _insert_plain(connection: Connection, table_name: str, values: dict[str, Any]) -> None:
    table = sa.Table(table_name, sa.MetaData(), autoload_with=connection)
    stamped = {c.name: datetime.now(UTC) for c in table.columns if isinstance(c.type, sa.DateTime)}
    connection.execute(sa.insert(table).values(**(stamped | values)))


PAIRS = [("", "no reply"), ("a pong", "a ping é"), ("", "no reply"), ("x", "")]  # one repeated


def test_revision_0008_stores_each_pair_of_texts_once_and_every_result_keeps_its_texts(database_url: str) -> None:
    """Results filled at 0007 with repeated texts read back equal through the model; the downgrade restores them."""
    from sqlmodel import Session, col, select

    from app.models import ClauseResultRow
    from app.models_clause import message_id

    _upgrade(database_url, "0007")
    before = _fill(database_url)
    with make_engine(database_url).begin() as connection:
        table = sa.Table("clause_result", sa.MetaData(), autoload_with=connection)
        ids = connection.execute(sa.select(table.c.id).order_by(table.c.id)).scalars().all()
        for row_id, (expected, actual) in zip(ids, PAIRS * len(ids), strict=False):
            connection.execute(sa.update(table).where(table.c.id == row_id).values(expected=expected, actual=actual))
    texts = [PAIRS[i % len(PAIRS)] for i in range(len(ids))]
    _upgrade(database_url, "0008")
    assert _counts(database_url) == before
    with Session(make_engine(database_url)) as session:
        rows = session.exec(select(ClauseResultRow).order_by(col(ClauseResultRow.id))).all()
        assert [(row.expected, row.actual) for row in rows] == texts
        stored = session.exec(select(sa.func.count()).select_from(sa.text("clause_message"))).one()
        assert stored == len(set(PAIRS))
        # The migration's digest is the writers': a pair it stored is found, not added again.
        assert message_id(session, "a pong", "a ping é") == rows[1].message_id
        assert session.exec(select(sa.func.count()).select_from(sa.text("clause_message"))).one() == stored
    with make_engine(database_url).connect() as connection:
        columns = {c["name"]: c for c in sa.inspect(connection).get_columns("clause_result")}
        assert "message_id" in columns and not {"expected", "actual"} & set(columns)
        if connection.dialect.name == "postgresql":
            updated = {c["name"]: c for c in sa.inspect(connection).get_columns("tap_window")}["updated_at"]
            assert updated["type"].timezone
    _downgrade(database_url, "0007")
    assert _counts(database_url) == before
    with make_engine(database_url).connect() as connection:
        restored = connection.execute(sa.text("SELECT expected, actual FROM clause_result ORDER BY id")).all()
        assert [tuple(row) for row in restored] == texts
        assert "clause_message" not in sa.inspect(connection).get_table_names()


def test_revision_0009_never_reuses_a_run_id_and_adds_the_started_client_column(database_url: str) -> None:
    """Runs filled at 0008 keep their ids and children; after 0009 the ids of deleted runs are never given again."""
    from sqlmodel import Session, col, delete, select

    from app.models import ClauseResultRow, Run, RunAttempt, Target, TranscriptRow

    _upgrade(database_url, "0008")
    before = _fill(database_url)
    with make_engine(database_url).connect() as connection:
        kept = connection.execute(sa.text("SELECT id FROM run ORDER BY id")).scalars().all()
    _upgrade(database_url, "0009")
    assert _counts(database_url) == before
    engine = make_engine(database_url)
    with engine.connect() as connection:
        assert connection.execute(sa.text("SELECT id FROM run ORDER BY id")).scalars().all() == kept
        assert "client_started_at" in {c["name"] for c in sa.inspect(connection).get_columns("run")}
        if connection.dialect.name == "sqlite":
            assert connection.execute(sa.text("PRAGMA foreign_keys")).scalar_one() == 1  # left as it was
            assert connection.execute(sa.text("PRAGMA foreign_key_check")).all() == []
    # Delete the target holding the newest runs, then add a run: it gets an id never used before.
    with Session(engine) as session:
        newest = session.get(Run, max(kept))
        assert newest is not None
        doomed = [run.id for run in session.exec(select(Run).where(Run.target_id == newest.target_id))]
        for table in (ClauseResultRow, TranscriptRow, RunAttempt):
            session.exec(delete(table).where(col(table.run_id).in_(doomed)))  # type: ignore[attr-defined]
        session.exec(delete(Run).where(col(Run.id).in_(doomed)))
        session.exec(delete(Target).where(col(Target.id) == newest.target_id))
        session.commit()
        other = session.exec(select(Target)).first()
        assert other is not None and other.id is not None
        fresh = Run(target_id=other.id, kind="k", url="u", harness_version="1", spec_version="1")
        session.add(fresh)
        session.commit()
        assert fresh.id is not None and fresh.id > max(kept)
    _downgrade(database_url, "0008")  # and back
    with engine.connect() as connection:
        assert "client_started_at" not in {c["name"] for c in sa.inspect(connection).get_columns("run")}
        assert connection.execute(sa.text("SELECT count(*) FROM run")).scalar_one() == len(kept) - len(doomed) + 1


def test_a_fresh_database_never_reuses_run_ids_either(database_url: str) -> None:
    """A database created at head (every revision in turn) has AUTOINCREMENT too, as the models declare."""
    from app.db import upgrade_database
    from app.models import Run

    upgrade_database(database_url)
    with make_engine(database_url).connect() as connection:
        if connection.dialect.name == "sqlite":
            sql = connection.execute(sa.text("SELECT sql FROM sqlite_master WHERE name = 'run'")).scalar_one()
            assert "AUTOINCREMENT" in sql.upper()
    assert Run.__table__.dialect_options["sqlite"]["autoincrement"] is True  # type: ignore[attr-defined]


DEPLOY_TABLES = ("run_identity", "deployment")


def test_revision_0010_adds_the_deploy_tables_as_the_models_have_them_and_they_go_with_their_run_or_target(
    database_url: str,
) -> None:
    """0010 creates exactly what `app.models_deploy` declares; a deleted run or target takes its rows along
    (ON DELETE CASCADE); downgrading to 0009 drops only the two tables."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlmodel import SQLModel

    import app.models_deploy  # noqa: F401  (the deploy tables on the metadata)

    _upgrade(database_url, "0009")
    before = _fill(database_url)
    _upgrade(database_url, "0010")
    with make_engine(database_url).begin() as connection:
        target_id = connection.execute(sa.text("SELECT min(id) FROM target")).scalar_one()
        run_id = connection.execute(sa.text("SELECT min(id) FROM run WHERE target_id = :t"), {"t": target_id}).scalar()
        _insert_plain(
            connection, "run_identity", {"run_id": run_id, "version": "v1", "source": "given", "evidence": ""}
        )
        deployment = {"environment": "prod", "target_id": target_id, "version": "v1", "released": False}
        _insert_plain(connection, "deployment", deployment)
        differences = compare_metadata(MigrationContext.configure(connection), SQLModel.metadata)
    about_deploys = [d for d in differences if any(name in repr(d) for name in DEPLOY_TABLES)]
    assert about_deploys == [], about_deploys
    assert _counts(database_url) == before
    with make_engine(database_url).begin() as connection:  # a target's runs go first, as app.crud deletes them
        for table in ("clause_result", "transcript"):
            connection.execute(
                sa.text(f"DELETE FROM {table} WHERE run_id IN (SELECT id FROM run WHERE target_id = :t)"),
                {"t": target_id},
            )
        connection.execute(sa.text("DELETE FROM run WHERE target_id = :t"), {"t": target_id})
        connection.execute(sa.text("DELETE FROM target WHERE id = :t"), {"t": target_id})
    with make_engine(database_url).connect() as connection:
        for table in DEPLOY_TABLES:
            assert connection.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one() == 0, table
    _downgrade(database_url, "0009")
    with make_engine(database_url).connect() as connection:
        assert not set(DEPLOY_TABLES) & set(sa.inspect(connection).get_table_names())
