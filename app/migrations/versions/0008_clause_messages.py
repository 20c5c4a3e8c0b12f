"""Fleet scale: a clause result names its (expected, actual) texts by id in `clause_message`.

A fleet's results repeat a few hundred texts over millions of rows, and the two text columns were
close to half of each row. Each distinct pair is stored once, keyed by a digest of both (the one
`app.models_clause.message_digest` computes at write time), and `clause_result.message_id` names it.

Existing rows are converted in batches of ids: their pairs are added to `clause_message` as they are
met, then every row of the batch gets its pair's id; the text columns go last. PostgreSQL keeps the
dropped columns' space in the table until it is rewritten (`VACUUM FULL clause_result`); new rows
are small at once. The downgrade puts the texts back on every row.

Also, on PostgreSQL: `tap_window.updated_at` becomes the time-zone-aware timestamp every other time
of the schema is (and its model declares); 0007 created it without a time zone.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

BATCH_ROWS = 5000  # result rows per read and per update: bounded memory, and below SQLite's variable limit
MESSAGE_FK = "fk_clause_result_message_id"

results = sa.table(
    "clause_result",
    sa.column("id", sa.Integer),
    sa.column("message_id", sa.Integer),
    sa.column("expected", sa.Text),
    sa.column("actual", sa.Text),
)
messages = sa.table(
    "clause_message",
    sa.column("id", sa.Integer),
    sa.column("digest", sa.String),
    sa.column("expected", sa.Text),
    sa.column("actual", sa.Text),
)


def _digest(expected: str, actual: str) -> str:
    """As `app.models_clause.message_digest` at this revision (tests/app/test_migrations.py holds them equal)."""
    return hashlib.sha256(f"{len(expected)}:{expected}{actual}".encode("utf-8", "surrogatepass")).hexdigest()


def upgrade() -> None:
    op.create_table(
        "clause_message",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("expected", sa.Text(), nullable=False),
        sa.Column("actual", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("digest"),
    )
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("message_id", sa.Integer(), nullable=True))
    _name_messages()
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.alter_column("message_id", existing_type=sa.Integer(), nullable=False)
        batch_op.create_foreign_key(MESSAGE_FK, "clause_message", ["message_id"], ["id"])
        batch_op.drop_column("expected")
        batch_op.drop_column("actual")
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "tap_window",
            "updated_at",
            type_=sa.DateTime(timezone=True),
            existing_nullable=False,
            postgresql_using="updated_at AT TIME ZONE 'UTC'",
        )


def _name_messages() -> None:
    """Every result row gets the id of its pair, adding pairs to `clause_message` as they are met."""
    connection = op.get_bind()
    ids: dict[tuple[str, str], int] = {}
    last = 0
    while True:
        rows = connection.execute(
            sa.select(results.c.id, results.c.expected, results.c.actual)
            .where(results.c.id > last)
            .order_by(results.c.id)
            .limit(BATCH_ROWS)
        ).all()
        if not rows:
            return
        by_message: dict[int, list[int]] = defaultdict(list)
        for row_id, expected, actual in rows:
            pair = (expected, actual)
            if pair not in ids:
                added = sa.insert(messages).values(digest=_digest(*pair), expected=expected, actual=actual)
                ids[pair] = int(connection.execute(added.returning(messages.c.id)).scalar_one())
            by_message[ids[pair]].append(row_id)
        for message, row_ids in by_message.items():
            connection.execute(sa.update(results).where(results.c.id.in_(row_ids)).values(message_id=message))
        last = rows[-1][0]


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "tap_window",
            "updated_at",
            type_=sa.DateTime(),
            existing_nullable=False,
            postgresql_using="updated_at AT TIME ZONE 'UTC'",
        )
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.add_column(sa.Column("expected", sa.Text(), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("actual", sa.Text(), nullable=False, server_default=""))
    pair = messages.alias("pair")
    for column in ("expected", "actual"):
        text = sa.select(pair.c[column]).where(pair.c.id == results.c.message_id).scalar_subquery()
        op.get_bind().execute(sa.update(results).values({column: text}))
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.alter_column("expected", existing_type=sa.Text(), server_default=None)
        batch_op.alter_column("actual", existing_type=sa.Text(), server_default=None)
        batch_op.drop_constraint(MESSAGE_FK, type_="foreignkey")
        batch_op.drop_column("message_id")
    op.drop_table("clause_message")
