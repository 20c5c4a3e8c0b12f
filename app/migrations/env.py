"""Alembic environment: run from `app.db.upgrade_database`, on a connection it hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

import app.models  # noqa: F401  (registers the tables on SQLModel.metadata)
import app.models_deploy  # noqa: F401  (run identities and deployments)
import app.models_tap  # noqa: F401  (the tap tables)
from app.db import make_engine, ours

config = context.config
target_metadata = SQLModel.metadata


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        with make_engine(config.get_main_option("sqlalchemy.url")).begin() as connection:
            _migrate(connection)
    else:
        _migrate(connection)


def _migrate(connection: Connection) -> None:
    # batch mode lets later migrations alter SQLite tables (copy-and-move)
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        include_name=ours,
    )
    with context.begin_transaction():
        context.run_migrations()


run_migrations()
