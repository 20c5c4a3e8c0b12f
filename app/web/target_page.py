"""`/targets/{name}`: history grid (paged), flaky clauses, pass-count trend, gate, the Run button and the
commands that start a run from a shell."""

from __future__ import annotations

import json
import shlex
from typing import Annotated
from urllib.parse import quote

from fastapi import Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import crud, redaction, tap_runs
from app.deps import RunnerDep, SessionDep, TargetDep
from app.history import last_passing_run, target_history
from app.models import DB_INT_MAX
from app.svg import trend_chart
from app.web.grid_cells import history_row_cells
from app.web.guard import WriteGuard
from app.web.invocation import rlconform_command
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

HISTORY_RUNS = 30


def trigger_commands(base_url: str, name: str) -> dict[str, str]:
    """The shell lines that start a run of this target: the CI client and a bare API call."""
    base = base_url.rstrip("/")
    return {
        "ci": f"{shlex.quote(rlconform_command())} ci --server {shlex.quote(base)} --target {shlex.quote(name)}",
        "curl": (
            'curl -fsS -X POST -H "Authorization: Bearer $RLCONFORM_API_TOKEN" '
            + shlex.quote(f"{base}/api/v1/targets/{quote(name, safe='')}/runs")
        ),
    }


@router.get("/targets/{name}", response_class=HTMLResponse, include_in_schema=False)
def target_page(
    request: Request,
    session: SessionDep,
    target: TargetDep,
    before: Annotated[int | None, Query(ge=0, le=DB_INT_MAX + 1)] = None,
) -> HTMLResponse:
    history = target_history(session, target, limit=HISTORY_RUNS, before_id=before)
    latest = history.runs[-1] if history.runs else None
    baseline = last_passing_run(session, target)
    context = {
        "target": target,
        "history": history,
        "history_cells": history_row_cells(history),
        "paged": before is not None,
        "commands": trigger_commands(str(request.base_url), target.name),
        "latest": latest,
        "baseline": baseline,
        "trend": trend_chart(history.trend),
        "options": {
            key: json.dumps(value) for key, value in redaction.redact_options(target.kind, target.options).items()
        },
        "nav": "targets",
        "tap": tap_runs.target_tap(session, target) is not None,  # a tap's runs take no phases or options
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
        return templates.TemplateResponse(request, "message.html", context, status_code=exc.status_code)
    runner.wake()
    return RedirectResponse(f"/runs/{run.id}", status_code=303)
