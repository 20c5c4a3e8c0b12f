"""`/runs`: every run across targets, newest first, queued and running ones on top with Cancel;
and `/matrix/{kind}`: clauses x the latest run of each target of one kind (`/matrix`: the first kind)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from fastapi import HTTPException, Query, Request
from fastapi.responses import HTMLResponse
from sqlmodel import Session, col, select

from app.deps import SessionDep
from app.history import COMPARISONS, RUN_TYPES, kind_matrix, narrow_to_type, runs_with_parity
from app.models import DB_INT_MAX, ENDED_STATUSES, ParityRun, Run, RunStatus, Target
from app.web.grid_cells import matrix_row_cells
from app.web.pages import page_router
from app.web.templating import templates
from checks.core import Outcome
from checks.registry import find_suite, kind_names

router = page_router()

PAGE_SIZE = 50
TRIGGERS = ("browser", "api", "ci", "schedule")
LIVE_STATUSES = [str(status) for status in RunStatus if status not in ENDED_STATUSES]


def _with_names(session: Session, rows: list[tuple[Run, ParityRun | None]]) -> list[tuple[Run, str, ParityRun | None]]:
    """Each run with its target's name (from one query for the lot) and its parity row."""
    ids = {run.target_id for run, _ in rows}
    names = dict(session.exec(select(Target.id, Target.name).where(col(Target.id).in_(ids))).all()) if ids else {}
    return [(run, names.get(run.target_id, "?"), parity) for run, parity in rows]


@router.get("/runs", response_class=HTMLResponse, include_in_schema=False)
def runs_page(
    request: Request,
    session: SessionDep,
    target: str = "",
    kind: str = "",
    status_filter: Annotated[str, Query(alias="status")] = "",
    outcome_filter: Annotated[str, Query(alias="outcome")] = "",
    trigger: str = "",
    run_type: Annotated[str, Query(alias="type")] = "",
    comparison: str = "",
    before: Annotated[int | None, Query(ge=0, le=DB_INT_MAX + 1)] = None,
) -> HTMLResponse:
    # The filter form sends empty values for "all"; unknown ones read as "all" too.
    status = RunStatus(status_filter) if status_filter in set(RunStatus) else None
    outcome = Outcome(outcome_filter) if outcome_filter in set(Outcome) else None
    comparison = comparison if comparison in COMPARISONS else ""
    # An outcome is a conformance verdict and a comparison a parity one: each filter implies its type.
    run_type = "conformance" if outcome else "parity" if comparison else run_type if run_type in RUN_TYPES else ""
    # Runs (with their parity row, if any), newest id first, so the id order is the index read and a page stops
    # after PAGE_SIZE rows; target names come in a second query.
    statement = runs_with_parity()
    if target:
        statement = statement.where(Run.target_id == select(Target.id).where(Target.name == target).scalar_subquery())
    if kind:
        statement = statement.where(Run.kind == kind)
    statement = narrow_to_type(statement, run_type, comparison)
    if outcome is not None:
        statement = statement.where(Run.outcome == outcome)
    if trigger:
        statement = statement.where(Run.trigger == trigger)
    active: list[tuple[Run, str, ParityRun | None]] = []
    if before is None and status in (None, RunStatus.QUEUED, RunStatus.RUNNING) and not (outcome or comparison):
        active_statuses = [status] if status is not None else [RunStatus.RUNNING, RunStatus.QUEUED]
        active_runs = session.exec(statement.where(col(Run.status).in_(active_statuses)).order_by(col(Run.id).desc()))
        active = _with_names(session, list(active_runs))
    # NOT IN the live statuses: `status IN (the ended ones)` would have the planner read the status index and sort.
    ended = statement.where(col(Run.status).not_in(LIVE_STATUSES))
    if status is not None:
        ended = ended.where(Run.status == status)
    if before is not None:
        ended = ended.where(col(Run.id) < before)
    page = _with_names(session, list(session.exec(ended.order_by(col(Run.id).desc()).limit(PAGE_SIZE + 1))))
    filters: dict[str, Any] = {
        "target": target,
        "kind": kind,
        "status": str(status) if status else "",
        "outcome": str(outcome) if outcome else "",
        "trigger": trigger,
        "type": run_type,
        "comparison": comparison,
    }
    context = {
        "active": active,
        "runs": page[:PAGE_SIZE],
        "older": page[PAGE_SIZE - 1][0].id if len(page) > PAGE_SIZE else None,
        "paged": before is not None,
        "filters": filters,
        "target_names": session.exec(select(Target.name).order_by(Target.name)).all(),
        "kinds": kind_names(),
        "statuses": [str(s) for s in RunStatus],
        "outcomes": [str(o) for o in Outcome],
        "triggers": TRIGGERS,
        "run_types": RUN_TYPES,
        "comparisons": COMPARISONS,
        "nav": "runs",
    }
    return templates.TemplateResponse(request, "runs.html", context)


@router.get("/matrix", response_class=HTMLResponse, include_in_schema=False)
def matrix_index(request: Request, session: SessionDep) -> HTMLResponse:
    """The first kind's matrix: a page that shows a matrix at once, not only the buttons choosing one."""
    kinds = session.exec(select(Target.kind).distinct().order_by(Target.kind)).all()
    context = matrix_context(session, kinds[0], kinds) if kinds else {"kinds": kinds, "kind": None, "nav": "matrix"}
    return templates.TemplateResponse(request, "matrix.html", context)


@router.get("/matrix/{kind}", response_class=HTMLResponse, include_in_schema=False)
def matrix_page(request: Request, session: SessionDep, kind: str) -> HTMLResponse:
    kinds = session.exec(select(Target.kind).distinct().order_by(Target.kind)).all()
    if kind not in kind_names() and kind not in kinds:
        raise HTTPException(404, f"no target kind {kind!r}")
    return templates.TemplateResponse(request, "matrix.html", matrix_context(session, kind, kinds))


def matrix_context(session: Session, kind: str, kinds: Sequence[str]) -> dict[str, Any]:
    columns, clause_ids, cells = kind_matrix(session, kind)
    suite = find_suite(kind)
    levels = {c.id: str(c.level) for c in suite.catalogue} if suite is not None else {}
    return {
        "kind": kind,
        "kinds": kinds,
        "columns": columns,
        "clause_ids": clause_ids,
        "matrix_cells": matrix_row_cells(columns, clause_ids, cells),
        "levels": levels,
        "nav": "matrix",
    }
