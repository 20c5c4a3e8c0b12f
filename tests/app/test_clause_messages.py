"""A clause result's texts stored once: one `clause_message` row per distinct pair, under concurrent writers too."""

from __future__ import annotations

import threading
import time

import sqlalchemy as sa
from sqlmodel import Session

from app.db import make_engine, upgrade_database
from app.models import ClauseResultRow
from app.models_clause import message_id
from tests.app.constructed import add_run, add_target


def _stored(url: str) -> int:
    with make_engine(url).connect() as connection:
        return int(connection.execute(sa.text("SELECT count(*) FROM clause_message")).scalar_one())


def _result(run_id: int, texts: int) -> ClauseResultRow:
    return ClauseResultRow(run_id=run_id, phase="p", clause_id="c.1", level="MUST", verdict="fail", message_id=texts)


def test_each_distinct_pair_is_stored_once_and_a_result_reads_its_texts(database_url: str) -> None:
    upgrade_database(database_url)
    engine = make_engine(database_url)
    with Session(engine) as session:
        first = message_id(session, "a pong", "nothing")
        assert message_id(session, "a pong", "nothing") == first
        # Length-prefixed: the same concatenation split differently is another pair.
        assert len({first, message_id(session, "a pon", "gnothing"), message_id(session, "", "")}) == 3
        session.commit()
    with Session(engine) as session:  # a later transaction: from the committed cache, or found again
        assert message_id(session, "a pong", "nothing") == first
    assert _stored(database_url) == 3


def test_a_rolled_back_pair_is_not_remembered(database_url: str) -> None:
    """The id of a pair added in a transaction that rolled back is never handed out: the result row commits."""
    upgrade_database(database_url)
    engine = make_engine(database_url)
    with Session(engine) as session:
        message_id(session, "gone", "with the rollback")
        session.rollback()
    assert _stored(database_url) == 0
    with Session(engine) as session:
        run = add_run(session, add_target(session), {})
        session.add(_result(run.id or 0, message_id(session, "gone", "with the rollback")))
        session.commit()  # a foreign key to a pair that exists
    assert _stored(database_url) == 1


def test_concurrent_writers_of_a_new_pair_share_one_row(database_url: str) -> None:
    """A second writer adding the pair another transaction holds uncommitted waits for it and gets its id."""
    upgrade_database(database_url)
    engine = make_engine(database_url)
    found: list[int] = []

    def second_writer() -> None:
        with Session(engine) as session:
            found.append(message_id(session, "both", "at once"))
            session.commit()

    with Session(engine) as session:
        first = message_id(session, "both", "at once")
        thread = threading.Thread(target=second_writer)
        thread.start()
        time.sleep(0.3)  # the second writer is waiting on the uncommitted row (or SQLite's write lock)
        assert not found
        session.commit()
    thread.join(timeout=20)
    assert not thread.is_alive()
    assert found == [first]
    assert _stored(database_url) == 1
