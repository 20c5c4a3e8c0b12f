"""Handing queued runs to procrastinate: the job is deferred in the transaction that queues the run.

The defer runs on the psycopg connection underneath the SQLAlchemy session,
so the run row and its `execute_run` job commit or roll back together: no
job without its run, no queued run without a job. The job carries the run id
only (procrastinate arguments are JSON); the worker reads the rest from our tables.
"""

from __future__ import annotations

from functools import cache

import procrastinate
from sqlalchemy.engine import make_url
from sqlmodel import Session

from app.models import Run

EXECUTE_RUN = "execute_run"
OPS_QUEUE = "rlconform-ops"  # schedules, lease recovery and webhooks: consumed by every service process


def conninfo(database_url: str) -> str:
    """A libpq URL from a SQLAlchemy one (`postgresql+psycopg://` becomes `postgresql://`)."""
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


@cache
def _deferrer() -> procrastinate.App:
    # Never opened: it only defers on connections it is handed, so it needs no pool of its own.
    return procrastinate.App(connector=procrastinate.SyncPsycopgConnector())


def defer_run(session: Session, run: Run) -> None:
    """Defer `execute_run(run_id)` on the run's label queue, inside the session's transaction."""
    session.flush()
    raw = session.connection().connection.driver_connection
    job_id = _deferrer().configure_task(EXECUTE_RUN, queue=run.worker_label, connection=raw).defer(run_id=run.id)
    run.job_id = job_id
    session.add(run)
    session.flush()
