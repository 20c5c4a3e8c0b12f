"""SQLite writers of the hot paths take turns (`app.db.write_turn`) instead of SQLite's sleeping retries."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from app import db


def _engine(tmp_path: Path):  # type: ignore[no-untyped-def]
    return db.make_engine(f"sqlite:///{tmp_path / 'turns.db'}")


def test_a_second_writer_waits_for_the_turn_and_gets_it_once_it_is_free(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    order: list[str] = []
    second_waiting = threading.Event()

    def second() -> None:
        second_waiting.set()
        with db.write_turn(engine):
            order.append("second")

    with db.write_turn(engine):
        waiter = threading.Thread(target=second)
        waiter.start()
        second_waiting.wait(5)
        waiter.join(0.2)  # it cannot have its turn while this block holds it
        order.append("first")
    waiter.join(5)
    assert order == ["first", "second"]
    assert (tmp_path / "turns.db-writers").is_file()


def test_a_turn_held_by_another_process_is_waited_for(tmp_path: Path) -> None:
    engine = _engine(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(tmp_path / 'turns.db-writers')!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        got = threading.Event()

        def write() -> None:
            with db.write_turn(engine), engine.begin() as connection:
                connection.execute(text("CREATE TABLE IF NOT EXISTS t (x INTEGER)"))
                got.set()

        writer = threading.Thread(target=write)
        writer.start()
        assert not got.wait(0.3)
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert got.wait(10)
        writer.join(10)
    finally:
        holder.kill()
        holder.wait(10)


def test_a_turn_held_too_long_is_no_longer_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    engine = _engine(tmp_path)
    monkeypatch.setattr(db, "WRITE_TURN_WAIT", 0.05)
    with db.write_turn(engine), caplog.at_level(logging.WARNING, logger="rlconform"):
        with db.write_turn(engine):  # the same thread again: it would wait forever on a plain flock
            pass
    assert "held its turn over" in caplog.text


def test_memory_and_postgresql_engines_take_no_turn(tmp_path: Path) -> None:
    with db.write_turn(db.make_engine("sqlite://")):
        pass
    engine = db.make_engine("postgresql+psycopg://nobody@127.0.0.1:9/none")
    with db.write_turn(engine):  # no connection is made, no file written
        pass
    assert not list(tmp_path.iterdir())
