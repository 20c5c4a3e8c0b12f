"""Constructed results for page and history tests: targets, runs and clause results written directly."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.models import ClauseResultRow, Run, RunStatus, Target
from app.models_clause import message_id
from app.settings import Settings
from tests.app.helpers import service_settings


@pytest.fixture(name="settings")
def settings_on_each_backend(database_url: str) -> Settings:
    """Every page test on SQLite, and on PostgreSQL too when one is configured (the history SQL differs)."""
    return service_settings(database_url)


@pytest.fixture(name="session")
def client_session(client: TestClient) -> Iterator[Session]:
    with Session(client.app.state.engine) as db:
        yield db


def add_target(session: Session, name: str = "t", kind: str = "constructed", **fields: Any) -> Target:
    """A target of a kind no suite knows, so pages show exactly the stored results."""
    target = Target(name=name, kind=kind, url="ws://127.0.0.1:9", **fields)
    session.add(target)
    session.commit()
    session.refresh(target)
    return target


def add_run(
    session: Session,
    target: Target,
    verdicts: dict[tuple[str, str], str],
    *,
    outcome: str | None = None,
    status: str = RunStatus.FINISHED,
    harness: str = "0.1.0",
) -> Run:
    """A run with the given (phase, clause id) -> verdict results, as the runner would store them.

    `outcome` defaults to what the verdicts imply; "" stores no outcome (a run that never finished).
    """
    failing = any(v in ("fail", "error") for v in verdicts.values())
    run = Run(
        target_id=target.id,
        kind=target.kind,
        url=target.url,
        status=status,
        outcome=(outcome or None) if outcome is not None else ("fail" if failing else "pass"),
        harness_version=harness,
        spec_version="1",
        total_clauses=len(verdicts),
        decided_clauses=len(verdicts),
    )
    session.add(run)
    session.commit()
    session.refresh(run)
    for (phase, clause_id), verdict in verdicts.items():
        session.add(
            ClauseResultRow(
                run_id=run.id,
                phase=phase,
                clause_id=clause_id,
                level="MUST",
                verdict=verdict,
                message_id=message_id(session, "a proper reply", f"{verdict} reply"),
            )
        )
    session.commit()
    return run
