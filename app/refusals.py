"""What the service refuses to store or to queue, and the query that decides a run's conflict.

Below both `app.crud` (targets and runs) and `app.tap_settings` (a tap run's settings), so that
each raises the same errors without importing the other; `app.crud` re-exports them for callers.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.errors import ServiceError
from app.models import Run, RunStatus, Target


class TargetInvalid(ServiceError):
    """Input that cannot be saved; `errors` are `{"loc": [...], "msg": str}` with field paths."""

    status_code = 422

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors))
        self.errors = errors


class RunConflict(TargetInvalid):
    """A run the target cannot have now (a tap already watching): the API answers 409, not 422."""

    status_code = 409


def live_run_ids(session: Session, target: Target) -> list[int]:
    """The target's queued and running runs."""
    live = [RunStatus.QUEUED, RunStatus.RUNNING]
    statement = select(col(Run.id)).where(Run.target_id == target.id, col(Run.status).in_(live))
    return [run_id for run_id in session.exec(statement) if run_id is not None]
