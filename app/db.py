"""The database engine, schema upgrades through Alembic, and sessions."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import event, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.exc import SQLAlchemyError
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

    PostgreSQL needs nothing at each run's end: its autovacuum makes dead rows' space reusable (revision
    0006 has it start after a fixed number of them); `vacuum_retained_tables` is what a sweep adds.
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


RETAINED_TABLES = ("transcript", "clause_result", "run")  # what retention deletes from and rewrites


def vacuum_retained_tables(engine: Engine) -> None:
    """On PostgreSQL, a plain VACUUM of RETAINED_TABLES (it stops no reads or writes); nothing elsewhere.

    The space of the rows retention deleted becomes reusable by the next runs now, and empty pages at
    a table's end go back to the file system. A failure is logged, not raised: autovacuum still runs.
    """
    if engine.dialect.name != "postgresql":
        return
    try:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            for table in RETAINED_TABLES:
                connection.exec_driver_sql(f"VACUUM {table}")
    except SQLAlchemyError as exc:  # e.g. a role that does not own the tables
        log.warning("VACUUM after retention failed (%s); autovacuum will reclaim the space", exc)


SQLITE_FULL = 13  # sqlite3's error code for "database or disk is full"
POSTGRES_DISK_FULL = "53100"
MIN_FREE_BYTES = 64 * 1024  # less free space beside a SQLite file than this, and the next commit may not fit


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc` (or its cause) says the database's disk is full, in SQLite's, PostgreSQL's or the OS's words."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.Error) and (
            getattr(current, "sqlite_errorcode", None) == SQLITE_FULL or "disk is full" in str(current)
        ):
            return True
        if getattr(current, "sqlstate", None) == POSTGRES_DISK_FULL:
            return True
        if isinstance(current, OSError) and current.errno == errno.ENOSPC:
            return True
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__ or current.__context__
    return False


def full_message(exc: BaseException) -> str:
    """What a write refused for want of space answers: `database full: ...`."""
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"database full: {reason[0] if reason else 'no space left'}; free space where the database is stored"


def space_problem(engine: Engine) -> str | None:
    """For a SQLite file: `database full: ...` when its filesystem has (almost) no space left."""
    url = engine.url
    if not url.drivername.startswith("sqlite") or not url.database or url.database == ":memory:":
        return None
    try:
        stats = os.statvfs(Path(url.database).resolve().parent)
    except OSError:
        return None
    free = stats.f_bavail * stats.f_frsize
    if free < MIN_FREE_BYTES:
        return f"database full: {free} bytes left beside {url.database}; free space where the database is stored"
    return None


def check_write(session: Session) -> None:
    """Commit a write that changes nothing (`/healthz`): raises what a real write would raise."""
    session.execute(text("UPDATE alembic_version SET version_num = version_num"))
    session.commit()


STARTUP_LOCK_WAIT = 5.0  # seconds start-up waits for another process's write lock on a SQLite file


def _where(url: str) -> str:
    """The database as a person names it: a SQLite file's path, else the URL without its password."""
    parsed = make_url(url)
    if parsed.drivername.startswith("sqlite"):
        return parsed.database or ":memory:"
    return parsed.render_as_string(hide_password=True)


def _sqlite_problem(path: str) -> str | None:
    """Whether the SQLite file can be read and written now: not corrupt, not locked (sqlite3's words)."""
    if not Path(path).exists():
        return None  # created on first use
    try:
        connection = sqlite3.connect(path, timeout=STARTUP_LOCK_WAIT)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        connection.execute("PRAGMA schema_version").fetchone()  # reads the header: "file is not a database"
        connection.execute("BEGIN IMMEDIATE")  # takes the write lock: "database is locked"
        connection.execute("ROLLBACK")
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        connection.close()
    return None


def startup_problem(url: str) -> str | None:
    """One line saying why the service cannot use its database (corrupt, locked, unreachable), or None.

    Also brings the schema to the newest revision, as start-up does anyway.
    """
    parsed = make_url(url)
    if parsed.drivername.startswith("sqlite") and parsed.database and parsed.database != ":memory:":
        problem = _sqlite_problem(parsed.database)
        if problem:
            return f"cannot use the database {_where(url)}: {problem}"
    try:
        upgrade_database(url)
    except (SQLAlchemyError, sqlite3.Error, OSError) as exc:
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        return f"cannot use the database {_where(url)}: {reason[0] if reason else type(exc).__name__}"
    return None
