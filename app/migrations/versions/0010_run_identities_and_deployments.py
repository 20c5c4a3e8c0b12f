"""Can I deploy: the implementation and version each run checked (`run_identity`), and what is deployed
where (`deployment`). Both are new tables; no existing row changes. Each row goes with its run or target
(ON DELETE CASCADE), so deleting runs and targets needs no change.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_identity",
        sa.Column("run_id", sa.Integer(), sa.ForeignKey("run.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("implementation", sa.String(length=128), nullable=True),
        sa.Column("version", sa.String(length=128), nullable=True),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("evidence", sa.String(length=500), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_run_identity_version", "run_identity", ["version"])
    op.create_table(
        "deployment",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("environment", sa.String(length=64), nullable=False),
        sa.Column("target_id", sa.Integer(), sa.ForeignKey("target.id", ondelete="CASCADE"), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("released", sa.Boolean(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("environment", "target_id", "version", "released", name="uq_deployment_version"),
    )
    op.create_index("ix_deployment_environment", "deployment", ["environment"])


def downgrade() -> None:
    op.drop_index("ix_deployment_environment", table_name="deployment")
    op.drop_table("deployment")
    op.drop_index("ix_run_identity_version", table_name="run_identity")
    op.drop_table("run_identity")
