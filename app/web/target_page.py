"""`/targets/{name}`: history grid, flaky clauses, pass-count trend, gate, and the Run button."""

from __future__ import annotations

import json

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import crud
from app.deps import RunnerDep, SessionDep, TargetDep
from app.history import last_passing_run, target_history
from app.svg import trend_chart
from app.web.guard import WriteGuard
from app.web.templating import templates

router = APIRouter()

HISTORY_RUNS = 30


@router.get("/targets/{name}", response_class=HTMLResponse, include_in_schema=False)
def target_page(request: Request, session: SessionDep, target: TargetDep) -> HTMLResponse:
    history = target_history(session, target, limit=HISTORY_RUNS)
    latest = history.runs[-1] if history.runs else None
    baseline = last_passing_run(session, target)
    context = {
        "target": target,
        "history": history,
        "latest": latest,
        "baseline": baseline,
        "trend": trend_chart(history.trend),
        "options": {key: json.dumps(value) for key, value in crud.redact_options(target.kind, target.options).items()},
        "nav": "targets",
    }
    return templates.TemplateResponse(request, "target.html", context)


@router.post("/targets/{name}/run", include_in_schema=False, dependencies=[WriteGuard])
def start_run(request: Request, session: SessionDep, target: TargetDep, runner: RunnerDep) -> Response:
    try:
        run = crud.enqueue_run(session, target, phases=None, options=None, trigger="browser")
    except crud.TargetInvalid as exc:
        context = {
            "title": f"Cannot run {target.name}",
            "messages": [e["msg"] for e in exc.errors],
            "back": f"/targets/{target.name}",
        }
        return templates.TemplateResponse(request, "message.html", context, status_code=422)
    runner.wake()
    return RedirectResponse(f"/runs/{run.id}", status_code=303)
