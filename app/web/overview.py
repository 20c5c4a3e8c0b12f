"""`/`: every target with its last outcome, a sparkline of recent runs and a Run button."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlmodel import Session, select

from app.deps import SessionDep
from app.history import latest_runs_per_target
from app.models import Target, stored_id
from app.svg import sparkline
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

SPARKLINE_RUNS = 20


def recent_runs_by_target(session: Session, limit: int) -> dict[int, list[Any]]:
    """The last `limit` runs of every target, oldest first: only the columns the page shows, one probe per target."""
    return latest_runs_per_target(session, limit)


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
