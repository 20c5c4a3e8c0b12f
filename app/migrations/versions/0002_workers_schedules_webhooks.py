"""Scale-out: procrastinate's schema (PostgreSQL), run leases and attempts, workers, schedules, webhooks.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

procrastinate ships no Alembic integration; its schema SQL is applied here once,
on PostgreSQL only (SQLite runs everything in-process). Later procrastinate
upgrades become new revisions that execute its shipped migration files.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _procrastinate_schema() -> str:
    from procrastinate.schema import SchemaManager

    return SchemaManager.get_schema()


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_procrastinate_schema())

    with op.batch_alter_table("target", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worker_label", sa.String(length=64), nullable=False, server_default="default"))

    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.add_column(sa.Column("worker_label", sa.String(length=64), nullable=False, server_default="default"))
        batch_op.add_column(sa.Column("scheduled_for", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch_op.add_column(sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("worker", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("job_id", sa.BigInteger(), nullable=True))
        batch_op.add_column(sa.Column("finished_phases", sa.JSON(), nullable=False, server_default="[]"))
        batch_op.create_index(batch_op.f("ix_run_lease_until"), ["lease_until"], unique=False)
        # A unique index, not a constraint: SQLite adds it without copying the table its results point at.
        batch_op.create_index("uq_run_target_scheduled_for", ["target_id", "scheduled_for"], unique=True)

    op.create_table(
        "run_attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(length=200), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("ending", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("run_id", "number", name="uq_run_attempt_run_number"),
    )
    with op.batch_alter_table("run_attempt", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_run_attempt_run_id"), ["run_id"], unique=False)

    op.create_table(
        "worker",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("labels", sa.JSON(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("heartbeat", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("worker", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_worker_heartbeat"), ["heartbeat"], unique=False)

    op.create_table(
        "schedule",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("cron", sa.String(length=128), nullable=True),
        sa.Column("interval_seconds", sa.Integer(), nullable=True),
        sa.Column("include_destructive", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["target_id"], ["target.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("target_id"),
    )
    # Interval schedules set on targets so far move into the schedule table.
    op.execute(
        "INSERT INTO schedule (target_id, interval_seconds, include_destructive, created_at) "
        "SELECT id, schedule_minutes * 60, false, created_at FROM target WHERE schedule_minutes IS NOT NULL"
    )

    op.create_table(
        "webhook",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("slack", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["target_id"], ["target.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_target_id"), ["target_id"], unique=False)

    op.create_table(
        "webhook_delivery",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["run.id"]),
        sa.ForeignKeyConstraint(["webhook_id"], ["webhook.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_delivery", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_delivery_run_id"), ["run_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_delivery_state"), ["state"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_delivery_webhook_id"), ["webhook_id"], unique=False)


def downgrade() -> None:
    for table in ("webhook_delivery", "webhook", "schedule", "worker", "run_attempt"):
        op.drop_table(table)
    with op.batch_alter_table("run", schema=None) as batch_op:
        batch_op.drop_index("uq_run_target_scheduled_for")
        batch_op.drop_index(batch_op.f("ix_run_lease_until"))
        for column in (
            "finished_phases",
            "job_id",
            "worker",
            "lease_until",
            "attempts",
            "scheduled_for",
            "worker_label",
        ):
            batch_op.drop_column(column)
    with op.batch_alter_table("target", schema=None) as batch_op:
        batch_op.drop_column("worker_label")
