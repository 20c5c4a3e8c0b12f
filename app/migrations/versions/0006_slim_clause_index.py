"""Fleet scale on PostgreSQL: clause results indexed by run alone; dead rows vacuumed while few.

The unique index on `clause_result (run_id, phase, clause_id)` repeated each row's phase and clause
id: on a PostgreSQL fleet it was a fifth of the database. An index on `run_id` serves every read
(each names the run) and the foreign key, and PostgreSQL stores its repeated keys once; one row per
(run, phase, clause) is kept by the single writer a run's lease admits (`app.recording`).

On PostgreSQL, the tables retention rewrites (`transcript`, `clause_result`, `run`) are vacuumed after
a fixed number of dead rows instead of a fifth of the table: the space of summarised transcripts and
pruned runs becomes reusable while it is small, rather than after a fleet has left a fifth of each
table dead. Storage parameters only; nothing is rewritten.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

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
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_clause_result_run_phase_clause", ["run_id", "phase", "clause_id"])
        batch_op.drop_index("ix_clause_result_run_id")
