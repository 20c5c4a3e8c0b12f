"""A clause result's texts, stored once: `clause_message` holds each distinct (expected, actual) pair.

A fleet's results repeat a few hundred texts over millions of rows (revision 0008), so a result row
names its pair by id. `message_id` finds or adds a pair at write time; it is safe under concurrent
writers on PostgreSQL and SQLite (insert-if-absent on the unique digest, then read), and keeps the ids
of committed pairs in a small per-engine cache so a run's writes seldom ask the database.
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import Column, Text, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import Field, Session, SQLModel, col, select

CACHED_PAIRS = 4096  # per engine; far more than the distinct texts of a fleet, cleared when full
_PENDING = "clause_message_ids"  # session.info key: ids added or read in the open transaction
_committed: weakref.WeakKeyDictionary[Engine, dict[str, int]] = weakref.WeakKeyDictionary()


class ClauseMessage(SQLModel, table=True):
    """One distinct (expected, actual) pair of clause results, found by the digest of both."""

    __tablename__ = "clause_message"
    id: int | None = Field(default=None, primary_key=True)
    digest: str = Field(max_length=64, unique=True)
    expected: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))
    actual: str = Field(default="", sa_column=Column(Text, nullable=False, default=""))


class ClauseResultPublic(SQLModel):
    phase: str
    clause_id: str
    level: str
    verdict: str
    expected: str
    actual: str
    duration: float
    checks: int
    transcript_ids: list[int]


def message_digest(expected: str, actual: str) -> str:
    """The pair's key: length-prefixed, so no two pairs share their concatenation."""
    return hashlib.sha256(f"{len(expected)}:{expected}{actual}".encode("utf-8", "surrogatepass")).hexdigest()


def message_id(session: Session, expected: str, actual: str) -> int:
    """The id of the stored pair, added in the session's transaction when it is new."""
    engine = session.get_bind()
    digest = message_digest(expected, actual)
    known = _committed.get(engine, {}).get(digest) if isinstance(engine, Engine) else None
    pending: dict[str, int] = session.info.setdefault(_PENDING, {})
    if known is None:
        known = pending.get(digest)
    if known is not None:
        return known
    lookup = select(ClauseMessage.id).where(ClauseMessage.digest == digest)
    found = session.exec(lookup).first()
    if found is None:
        dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
        values = {"digest": digest, "expected": expected, "actual": actual}
        session.execute(
            dialect.insert(ClauseMessage).values(**values).on_conflict_do_nothing(index_elements=["digest"])
        )
        found = session.exec(lookup).one()
    # Cached for other transactions only once this one commits: a rolled-back insert leaves no id behind.
    pending[digest] = known = cast(int, found)  # a primary key, never None once stored
    return known


def message_ids(session: Session, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The ids of many stored pairs at once, adding the new ones: one lookup and one insert at most.

    What a batch of results needs (`app.recording`), instead of a lookup per result.
    """
    engine = session.get_bind()
    committed = _committed.get(engine, {}) if isinstance(engine, Engine) else {}
    pending: dict[str, int] = session.info.setdefault(_PENDING, {})
    digests = {pair: message_digest(*pair) for pair in set(pairs)}
    ids = {pair: committed.get(digest) or pending.get(digest) for pair, digest in digests.items()}
    missing = {digests[pair]: pair for pair, known in ids.items() if known is None}
    if missing:
        found = _stored_ids(session, list(missing))
        absent = [digest for digest in missing if digest not in found]
        if absent:
            dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
            rows = [{"digest": d, "expected": missing[d][0], "actual": missing[d][1]} for d in absent]
            session.execute(dialect.insert(ClauseMessage).on_conflict_do_nothing(index_elements=["digest"]), rows)
            found |= _stored_ids(session, absent)
        # Cached for other transactions only once this one commits, as `message_id` does.
        pending.update(found)
        ids.update({pair: found[digest] for digest, pair in missing.items()})
    return cast(dict[tuple[str, str], int], ids)


def _stored_ids(session: Session, digests: list[str]) -> dict[str, int]:
    found = session.exec(select(ClauseMessage.digest, ClauseMessage.id).where(col(ClauseMessage.digest).in_(digests)))
    return {digest: cast(int, known) for digest, known in found}


@event.listens_for(OrmSession, "after_commit")
def _remember_committed(session: OrmSession) -> None:
    pending: dict[str, int] = session.info.pop(_PENDING, {})
    engine: Any = session.get_bind() if pending else None
    if isinstance(engine, Engine):
        cache = _committed.setdefault(engine, {})
        if len(cache) + len(pending) > CACHED_PAIRS:
            cache.clear()
        cache.update(pending)


@event.listens_for(OrmSession, "after_soft_rollback")
def _forget_pending(session: OrmSession, _previous: Any) -> None:
    session.info.pop(_PENDING, None)
