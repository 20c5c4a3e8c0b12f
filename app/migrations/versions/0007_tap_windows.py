"""Taps in the service: a target may be a tap (`tap_target`), and each window of its traffic is a run
with its live counters (`tap_window`).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tap_target",
        sa.Column("target_id", sa.Integer(), sa.ForeignKey("target.id"), primary_key=True),
        sa.Column("listen", sa.String(length=300), nullable=False),
        sa.Column("roll_seconds", sa.Float(), nullable=True),
        sa.Column("roll_messages", sa.Integer(), nullable=True),
        sa.Column("tap_options", sa.JSON(), nullable=False),
    )
    op.create_table(
        "tap_window",
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("run.id"), primary_key=True),
        sa.Column("session_id", sa.String(length=64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("listen_url", sa.String(length=300), nullable=False),
        sa.Column("ledger", sa.JSON(), nullable=False),
        sa.Column("messages_per_second", sa.Float(), nullable=False),
        sa.Column("added_latency_ms", sa.Float(), nullable=True),
        sa.Column("unjudged", sa.Integer(), nullable=False),
        sa.Column("closed", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_tap_window_session", "tap_window", ["session_id", "number"])


def downgrade() -> None:
    op.drop_index("ix_tap_window_session", table_name="tap_window")
    op.drop_table("tap_window")
    op.drop_table("tap_target")
