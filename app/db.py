"""The database engine, schema upgrades through Alembic, and sessions."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from fastapi import Request
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry
from sqlmodel import Session, create_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
INCREMENTAL = 2  # PRAGMA auto_vacuum's value for INCREMENTAL

log = logging.getLogger("rlconform")


@cache
def make_engine(url: str) -> Engine:
    """One engine per URL. SQLite gets WAL and a busy timeout so the runner and pages share it."""
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
            cursor = dbapi_connection.cursor()
            # Takes effect only on a new file (before its first table); `enable_incremental_vacuum` converts old ones.
            cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
            if ":memory:" not in url:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def ours(name: str | None, type_: str, parent_names: Mapping[Any, str | None]) -> bool:
    """Alembic's `include_name`: procrastinate's tables and indexes (revision 0002 applies its SQL) are not ours."""
    table = name if type_ == "table" else parent_names.get("table_name")
    return not (table or "").startswith("procrastinate_")


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_database(url: str) -> None:
    """Bring the schema to the newest revision; existing history is migrated, never dropped."""
    engine = make_engine(url)
    with engine.begin() as connection:
        config = alembic_config(url)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    if engine.dialect.name == "sqlite":
        enable_incremental_vacuum(engine)


def enable_incremental_vacuum(engine: Engine) -> bool:
    """Turn an SQLite file created without incremental auto-vacuum into one that has it; True when it has.

    Pruned runs then give their pages back to the file system (`release_free_pages`). Converting takes
    one VACUUM, which rewrites the file: it is skipped, to be tried at the next start, when the disk has
    less room than a copy of the file needs or another connection holds the database.
    """
    with engine.connect() as connection:
        if connection.exec_driver_sql("PRAGMA auto_vacuum").scalar() == INCREMENTAL:
            return True
        path = engine.url.database or ""
        if path and path != ":memory:" and Path(path).exists():
            size = Path(path).stat().st_size
            if shutil.disk_usage(Path(path).resolve().parent).free < 2 * size:
                log.warning("%s: too little free disk to convert to incremental vacuum; left as it is", path)
                return False
        log.info("%s: rewriting the file once (VACUUM) so that pruned runs give their space back", path)
        connection.exec_driver_sql("PRAGMA auto_vacuum=INCREMENTAL")
        connection.commit()
        raw = connection.connection.driver_connection
        assert raw is not None
        previous = raw.isolation_level
        raw.isolation_level = None  # VACUUM cannot run inside a transaction
        try:
            raw.execute("VACUUM")
        except Exception as exc:  # noqa: BLE001 - locked or full: the file stays as it was (VACUUM is atomic)
            log.warning("%s: VACUUM to enable incremental vacuum failed (%s); will retry at next start", path, exc)
            return False
        finally:
            raw.isolation_level = previous
        return connection.exec_driver_sql("PRAGMA auto_vacuum").scalar() == INCREMENTAL


def release_free_pages(engine: Engine, max_pages: int = 0) -> int:
    """Give free SQLite pages back to the file system (all of them when `max_pages` is 0); returns how many.

    PostgreSQL needs nothing here: its autovacuum makes dead rows' space reusable.
    """
    if engine.dialect.name != "sqlite":
        return 0
    with engine.connect() as connection:
        free = int(connection.exec_driver_sql("PRAGMA freelist_count").scalar() or 0)
        if free:
            raw = connection.connection.driver_connection
            assert raw is not None
            connection.commit()
            # As a script: the pragma frees one page per step, and a plain execute steps it only once.
            raw.executescript(f"PRAGMA incremental_vacuum({int(max_pages)});")
        return free if not max_pages else min(free, max_pages)


def get_session(request: Request) -> Iterator[Session]:
    """A session on the app's engine for one request."""
    # In workers mode a queued run's job is deferred in the transaction that queues it (`crud.enqueue_run`).
    with Session(request.app.state.engine, info={"requeue": getattr(request.app.state, "requeue", None)}) as session:
        yield session
