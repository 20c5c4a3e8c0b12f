"""`/runs/{run_id}/tap`: a tap run's live per-clause counters, messages per second, unjudged messages
and each violated clause's first violation with its evidence. While the run watches, the page
refreshes itself every few seconds (a `<meta refresh>`, so it needs no JavaScript)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app import tap_runs
from app.deps import RunDep, SessionDep
from app.models import ENDED_STATUSES, Target
from app.models_tap import LedgerDoc
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()
REFRESH_SECONDS = 3
# Clauses in this order: what failed first, then what passed, then what the traffic did not decide.
VERDICT_RANK = {"fail": 0, "error": 1, "warn": 2, "info": 3, "pass": 4, "skip": 5}


def tap_context(ledger: LedgerDoc) -> dict[str, Any]:
    clauses = sorted(ledger.clauses, key=lambda c: (VERDICT_RANK.get(c.verdict, 9), c.clause_id))
    return {
        "decided": [c for c in clauses if c.verdict != "skip"],
        "undecided": [c for c in clauses if c.verdict == "skip"],
        "violated": [c for c in clauses if c.first_violation is not None],
    }


@router.get("/runs/{run_id}/tap", response_class=HTMLResponse, include_in_schema=False)
def tap_run_page(request: Request, session: SessionDep, run: RunDep) -> Response:
    window = tap_runs.run_window(session, run)
    if window is None:
        return RedirectResponse(f"/runs/{run.id}", status_code=303)
    ledger = LedgerDoc.model_validate(window.ledger)
    context = {
        "run": run,
        "target": session.get(Target, run.target_id),
        "window": window,
        "ledger": ledger,
        "windows": tap_runs.session_windows(session, window),
        "live": run.status not in ENDED_STATUSES,
        "refresh": REFRESH_SECONDS,
        "nav": "targets",
        **tap_context(ledger),
    }
    return templates.TemplateResponse(request, "tap_run.html", context)
