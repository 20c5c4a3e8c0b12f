"""Fleet scale: transcripts stored compressed, with a summary mark.

`transcript.frames` turns from JSON into zlib-compressed JSON bytes (`app.models.CompressedJSON`),
copied in batches; `transcript.summarised` marks a transcript that retention kept as a summary
(`app.retention`). The indexes on `clause_result` that the unique (run, phase, clause) index makes
redundant go: every read of clause results names the run, and on a fleet they were a fifth of the
table's size.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from __future__ import annotations

import json
import zlib
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

BATCH = 500  # rows converted per round trip: bounded memory on a fleet's millions of transcripts


def _frames_json(value: Any) -> Any:
    """A JSON column's value as the driver returns it (a string on some, parsed on others)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def _copy(source: str, target: sa.ColumnClause[Any], convert: Any) -> None:
    """Fill column `target` of every transcript from column `source` through `convert`, in batches by id."""
    connection = op.get_bind()
    table = sa.table("transcript", sa.column("id", sa.Integer), sa.column(source), target)
    last = 0
    while True:
        rows = connection.execute(
            sa.select(table.c.id, table.c[source]).where(table.c.id > last).order_by(table.c.id).limit(BATCH)
        ).all()
        if not rows:
            return
        statement = (
            sa.update(table).where(table.c.id == sa.bindparam("row_id")).values({target.name: sa.bindparam("value")})
        )
        connection.execute(statement, [{"row_id": row_id, "value": convert(value)} for row_id, value in rows])
        last = rows[-1][0]


def upgrade() -> None:
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.add_column(sa.Column("frames_zlib", sa.LargeBinary(), nullable=True))
        batch_op.add_column(sa.Column("summarised", sa.Boolean(), nullable=False, server_default=sa.false()))
    _copy("frames", sa.column("frames_zlib", sa.LargeBinary), lambda value: _compress(_frames_json(value)))
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.drop_column("frames")
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.alter_column("frames_zlib", new_column_name="frames", existing_type=sa.LargeBinary(), nullable=False)
        batch_op.drop_index("ix_transcript_run_id")
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.drop_index("ix_clause_result_run_id")
        batch_op.drop_index("ix_clause_result_clause_run")


def downgrade() -> None:
    with op.batch_alter_table("clause_result", schema=None) as batch_op:
        batch_op.create_index("ix_clause_result_clause_run", ["clause_id", "run_id"], unique=False)
        batch_op.create_index("ix_clause_result_run_id", ["run_id"], unique=False)
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.create_index("ix_transcript_run_id", ["run_id"], unique=False)
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.add_column(sa.Column("frames_json", sa.JSON(), nullable=True))
    _copy("frames", sa.column("frames_json", sa.JSON), lambda value: json.loads(zlib.decompress(value)))
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.drop_column("frames")
        batch_op.drop_column("summarised")
    with op.batch_alter_table("transcript", schema=None) as batch_op:
        batch_op.alter_column("frames_json", new_column_name="frames", existing_type=sa.JSON(), nullable=False)


def _compress(value: Any) -> bytes:
    # The same encoding as app.models.compress_json; written out so this revision never changes with the models.
    return zlib.compress(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(), 6)
