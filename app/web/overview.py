"""`/`: every target with its last outcome, a sparkline of recent runs and a Run button.

`?q=` keeps the targets whose name, URL or description holds the text, `?kind=` those of one kind: a
GET form, so the filter works without JavaScript and a filtered list can be linked to.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import func, or_
from sqlmodel import Session, col, select

from app.deps import SessionDep
from app.history import latest_runs_per_target
from app.models import Target, stored_id
from app.models_tap import TapTarget
from app.svg import sparkline
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

SPARKLINE_RUNS = 20
SEARCHED = (col(Target.name), col(Target.url), col(Target.description))  # what the search box looks in


def recent_runs_by_target(session: Session, limit: int) -> dict[int, list[Any]]:
    """The last `limit` runs of every target, oldest first: only the columns the page shows, one probe per target."""
    return latest_runs_per_target(session, limit)


Search = Annotated[str, Query(max_length=200)]


def matching_targets(session: Session, q: str, kind: str) -> list[Target]:
    """Targets whose name, URL or description holds `q` (any case), of `kind` when one is given."""
    statement = select(Target).order_by(Target.name)
    if kind:
        statement = statement.where(Target.kind == kind)
    if q:
        needle = q.lower()
        statement = statement.where(or_(*(func.lower(column).contains(needle, autoescape=True) for column in SEARCHED)))
    return list(session.exec(statement).all())


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
def overview(
    request: Request, session: SessionDep, q: Search = "", kind: Search = "", deleted: Search = ""
) -> HTMLResponse:
    q, kind = q.strip(), kind.strip()
    targets = matching_targets(session, q, kind)
    recent = recent_runs_by_target(session, SPARKLINE_RUNS)
    taps = set(session.exec(select(TapTarget.target_id)).all())
    rows: list[dict[str, Any]] = []
    for target in targets:
        runs = recent.get(stored_id(target), [])
        last = runs[-1] if runs else None
        last_ended = next((run for run in reversed(runs) if run.outcome), None)
        rows.append(
            {
                "target": target,
                "tap": target.id in taps,
                "last": last,
                "last_ended": last_ended,
                "sparkline": sparkline([{"id": r.id, "status": r.status, "outcome": r.outcome} for r in runs]),
            }
        )
    context = {
        "rows": rows,
        "nav": "targets",
        "filter": {"q": q, "kind": kind},
        "kinds": session.exec(select(Target.kind).distinct().order_by(Target.kind)).all(),
        "total": session.exec(select(func.count()).select_from(Target)).one(),
        "deleted": deleted,
    }
    return templates.TemplateResponse(request, "overview.html", context)
