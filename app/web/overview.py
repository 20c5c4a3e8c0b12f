"""`/`: every target with its last outcome, a sparkline of recent runs and a Run button."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlalchemy import func
from sqlmodel import Session, col, select

from app.deps import SessionDep
from app.history import conformance_runs
from app.models import Run, Target, stored_id
from app.svg import sparkline
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

SPARKLINE_RUNS = 20


def recent_runs_by_target(session: Session, limit: int) -> dict[int, list[Run]]:
    """The last `limit` runs of every target, oldest first, from one windowed query."""
    position = (
        func.row_number()
        .over(partition_by=col(Run.target_id), order_by=(col(Run.created_at).desc(), col(Run.id).desc()))
        .label("position")
    )
    ranked = select(Run.id, position).where(conformance_runs()).subquery()
    statement = (
        select(Run)
        .join(ranked, ranked.c.id == Run.id)
        .where(ranked.c.position <= limit)
        .order_by(col(Run.created_at), col(Run.id))
    )
    by_target: dict[int, list[Run]] = {}
    for run in session.exec(statement):
        by_target.setdefault(run.target_id, []).append(run)
    return by_target


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def overview(request: Request, session: SessionDep) -> HTMLResponse:
    targets = session.exec(select(Target).order_by(Target.name)).all()
    recent = recent_runs_by_target(session, SPARKLINE_RUNS)
    rows: list[dict[str, Any]] = []
    for target in targets:
        runs = recent.get(stored_id(target), [])
        last = runs[-1] if runs else None
        last_ended = next((run for run in reversed(runs) if run.outcome), None)
        rows.append(
            {
                "target": target,
                "last": last,
                "last_ended": last_ended,
                "sparkline": sparkline([{"id": r.id, "status": r.status, "outcome": r.outcome} for r in runs]),
            }
        )
    return templates.TemplateResponse(request, "overview.html", {"rows": rows, "nav": "targets"})
