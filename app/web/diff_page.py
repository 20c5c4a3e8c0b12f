"""`/runs/{run_id}/diff?against=<run id>|baseline|previous`: what changed between two runs."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlmodel import Session

from app.deps import RunDep, SessionDep
from app.history import DIFF_CATEGORIES, comparison_run, diff_runs
from app.models import Run, Target
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()

CATEGORY_TITLES = {
    "newly_failing": ("Newly failing", "decided in both runs; failing now (fail, warn or error), not before"),
    "newly_passing": ("Newly passing", "failing before, passing now"),
    "changed": ("Changed", "another verdict that is neither of the above"),
    "added": ("Added", "decided only in this run"),
    "removed": ("Removed", "decided only in the other run"),
}


# What the page calls each keyword of `against`: its buttons say "previous" and "last passing".
BASE_NAMES = {"previous": "previous", "baseline": "last passing"}


def resolve_against(session: Session, run: Run, against: str) -> tuple[Run | None, str]:
    """The run to compare with, and a sentence saying why it is missing when it is."""
    try:
        base = comparison_run(session, run, against or "previous")
    except ValueError:
        return None, "Compare with a run id, or press previous or last passing."
    missing = {
        "baseline": "This target has no passing run before this one: there is no last passing run to compare with.",
        "previous": "This is the target's first run; there is nothing before it.",
    }
    return base, "" if base else missing.get(against or "previous", f"There is no run #{against}.")


@router.get("/runs/{run_id}/diff", response_class=HTMLResponse, include_in_schema=False)
def diff_page(request: Request, session: SessionDep, run: RunDep, against: str = "previous") -> HTMLResponse:
    base, missing = resolve_against(session, run, against.strip())
    diff = diff_runs(session, base, run) if base is not None else None
    context = {
        "run": run,
        "base": base,
        "against": against,
        # The base as the buttons name it; the box shows the run id it resolved to, never the keyword.
        "base_name": BASE_NAMES.get(against.strip(), ""),
        "missing": missing,
        "diff": diff,
        "target": session.get(Target, run.target_id),
        "categories": [(name, *CATEGORY_TITLES[name]) for name in DIFF_CATEGORIES],
        "nav": "targets",
    }
    return templates.TemplateResponse(request, "diff.html", context, status_code=200 if diff else 404)
