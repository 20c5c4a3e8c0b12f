"""Run ids are never reused; a run records when this service started a reference client for it.

SQLite gives a table without AUTOINCREMENT the largest id plus one, so deleting a target whose runs
were the newest handed their ids to the next runs, and links printed by CI or sent by webhooks then
named another target's run. SQLite adds AUTOINCREMENT only by rebuilding the table (batch mode).
Rebuilding a parent table needs foreign keys off, which SQLite allows only outside a transaction:
what earlier revisions of this upgrade did is committed first, the rebuild runs in a transaction of
its own and is checked with `PRAGMA foreign_key_check` before it commits. The rebuild is skipped
when it is already done, so an upgrade stopped between that commit and the version bump finishes.
PostgreSQL's sequences never hand out an id twice; there the column is all that changes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

COLUMN = "client_started_at"


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.add_column("run", sa.Column(COLUMN, sa.DateTime(timezone=True), nullable=True))
        return
    if _sqlite_autoincrement() and COLUMN in _columns():
        return
    with _foreign_keys_off():
        with op.batch_alter_table("run", recreate="always", table_kwargs={"sqlite_autoincrement": True}) as batch:
            if COLUMN not in _columns():
                batch.add_column(sa.Column(COLUMN, sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.drop_column("run", COLUMN)
        return
    with _foreign_keys_off():
        with op.batch_alter_table("run", recreate="always", table_kwargs={"sqlite_autoincrement": False}) as batch:
            batch.drop_column(COLUMN)


def _columns() -> set[str]:
    return {column["name"] for column in sa.inspect(op.get_bind()).get_columns("run")}


def _sqlite_autoincrement() -> bool:
    sql = op.get_bind().exec_driver_sql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'run'")
    return "AUTOINCREMENT" in str(sql.scalar_one()).upper()


@contextmanager
def _foreign_keys_off() -> Iterator[None]:
    """Foreign keys off around a rebuild of `run` (its children point at it), in a transaction of its own."""
    raw: Any = op.get_bind().connection.driver_connection
    enforced = bool(raw.execute("PRAGMA foreign_keys").fetchone()[0])
    if raw.in_transaction:
        raw.commit()
    raw.execute("PRAGMA foreign_keys=OFF")
    raw.execute("BEGIN")
    try:
        yield
        broken = raw.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            raise RuntimeError(f"rebuilding the run table would break foreign keys: {broken[:5]}")
        raw.commit()
    except BaseException:
        raw.rollback()
        raise
    finally:
        if enforced:
            raw.execute("PRAGMA foreign_keys=ON")
