"""The initial schema: targets, runs, clause results and transcripts.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "target",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=False),
        sa.Column("gate", sa.String(length=16), nullable=False),
        sa.Column("schedule_minutes", sa.Integer(), nullable=True),
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("expected_failures", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("target", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_target_name"), ["name"], unique=True)

    op.create_table(
        "run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("phases", sa.JSON(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("gate", sa.String(length=16), nullable=False),
        sa.Column("expected_failures", sa.JSON(), nullable=False),
        sa.Column("harness_version", sa.String(length=32), nullable=False),
        sa.Column("spec_version", sa.String(length=32), nullable=False),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column("current_phase", sa.String(length=64), nullable=True),
        sa.Column("total_clauses", sa.Integer(), nullable=False),
        sa.Column("decided_clauses", sa.Integer(), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["target.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_created_at"), ["created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_run_status"), ["status"], unique=False)
        batch_op.create_index("ix_run_target_created", ["target_id", "created_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_run_target_id"), ["target_id"], unique=False)

    op.create_table(
        "clause_result",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=64), nullable=False),
        sa.Column("clause_id", sa.String(length=128), nullable=False),
        sa.Column("level", sa.String(length=8), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("expected", sa.Text(), nullable=False),
        sa.Column("actual", sa.Text(), nullable=False),
        sa.Column("duration", sa.Float(), nullable=False),
        sa.Column("checks", sa.Integer(), nullable=False),
        sa.Column("transcript_ids", sa.JSON(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["run.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "phase", "clause_id", name="uq_clause_result_run_phase_clause"),
    )
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.create_index("ix_clause_result_clause_run", ["clause_id", "run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_clause_result_run_id"), ["run_id"], unique=False)

    op.create_table(
        "transcript",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=64), nullable=False),
        sa.Column("label", sa.String(length=512), nullable=False),
        sa.Column("frames", sa.JSON(), nullable=False),
        sa.Column("dropped", sa.Integer(), nullable=False),
        sa.Column("close_code", sa.Integer(), nullable=True),
        sa.Column("close_reason", sa.Text(), nullable=True),
        sa.Column("closed_by", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["run.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "number", name="uq_transcript_run_number"),
    )
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_transcript_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_transcript_run_id"))

    op.drop_table("transcript")
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_clause_result_run_id"))
        batch_op.drop_index("ix_clause_result_clause_run")

    op.drop_table("clause_result")
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_target_id"))
        batch_op.drop_index("ix_run_target_created")
        batch_op.drop_index(batch_op.f("ix_run_status"))
        batch_op.drop_index(batch_op.f("ix_run_created_at"))

    op.drop_table("run")
    with op.batch_alter_table("target", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_target_name"))

    op.drop_table("target")
