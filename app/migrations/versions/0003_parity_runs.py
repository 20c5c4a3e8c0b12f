"""Parity runs and golden recordings: two new tables; runs and their results are untouched.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "parity_run",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("second_target_id", sa.Integer(), nullable=True),
        sa.Column("second_name", sa.String(length=128), nullable=False),
        sa.Column("golden_id", sa.Integer(), nullable=True),
        sa.Column("script_version", sa.String(length=32), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("recordings", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.PrimaryKeyConstraint("run_id"),
    )
    op.create_table(
        "golden",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("source", sa.String(length=2048), nullable=False),
        sa.Column("source_run_id", sa.Integer(), nullable=True),
        sa.Column("script_version", sa.String(length=32), nullable=False),
        sa.Column("document", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("golden", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_golden_name"), ["name"], unique=True)


def downgrade() -> None:
    op.drop_table("golden")
    op.drop_table("parity_run")
