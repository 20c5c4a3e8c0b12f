"""Fleet scale: results indexed by run alone, transcripts keyed by (run, number), dead rows vacuumed early.

The unique index on `clause_result (run_id, phase, clause_id)` repeated each row's phase and clause
id: on a PostgreSQL fleet it was a fifth of the database. An index on `run_id` serves every read
(each names the run) and the foreign key, and PostgreSQL stores its repeated keys once; one row per
(run, phase, clause) is kept by the single writer a run's lease admits (`app.recording`).

A transcript's key becomes (run_id, number), which results name it by and which was already unique;
its row id, which nothing referred to, goes with the index it needed.

On PostgreSQL, the tables retention rewrites (`transcript`, `clause_result`, `run`) are vacuumed after
a fixed number of dead rows instead of a fifth of the table: the space of summarised transcripts and
pruned runs becomes reusable while it is small, rather than after a fleet has left a fifth of each
table dead. Storage parameters only; nothing is rewritten.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

VACUUMED_TABLES = ("transcript", "clause_result", "run")
DEAD_ROWS_BEFORE_VACUUM = 10_000


def upgrade() -> None:
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.create_index("ix_clause_result_run_id", ["run_id"], unique=False)
        batch_op.drop_constraint("uq_clause_result_run_phase_clause", type_="unique")
    with op.batch_alter_table("transcript", schema=None, recreate="auto") as batch_op:
        batch_op.drop_constraint("uq_transcript_run_number", type_="unique")
        batch_op.drop_column("id")  # and the primary key on it
        batch_op.create_primary_key("transcript_pkey", ["run_id", "number"])
    if op.get_bind().dialect.name == "postgresql":
        for table in VACUUMED_TABLES:
            op.execute(
                f"ALTER TABLE {table} SET (autovacuum_vacuum_scale_factor = 0, "
                f"autovacuum_vacuum_threshold = {DEAD_ROWS_BEFORE_VACUUM})"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in VACUUMED_TABLES:
            op.execute(f"ALTER TABLE {table} RESET (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold)")
    _restore_transcript_ids()
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_clause_result_run_phase_clause", ["run_id", "phase", "clause_id"])
        batch_op.drop_index("ix_clause_result_run_id")


def _restore_transcript_ids() -> None:
    """Transcripts keyed by a row id again (numbered in key order), (run_id, number) unique."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE transcript DROP CONSTRAINT transcript_pkey")
        op.execute("ALTER TABLE transcript ADD COLUMN id SERIAL")  # numbers every row
        op.execute("ALTER TABLE transcript ADD CONSTRAINT transcript_pkey PRIMARY KEY (id)")
        op.create_unique_constraint("uq_transcript_run_number", "transcript", ["run_id", "number"])
        return
    # SQLite: the table is rebuilt with an INTEGER PRIMARY KEY `id`, which numbers the copied rows itself.
    with op.batch_alter_table(
        "transcript",
        schema=None,
        recreate="always",
        table_args=(sa.UniqueConstraint("run_id", "number", name="uq_transcript_run_number"),),
    ) as batch_op:
        batch_op.drop_constraint("transcript_pkey", type_="primary")
        batch_op.add_column(sa.Column("id", sa.Integer(), nullable=False, primary_key=True))
