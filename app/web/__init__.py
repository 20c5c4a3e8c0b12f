"""Server-rendered pages: overview, targets and their forms, runs, evidence, diffs and the SPEC.

Every page works without JavaScript; `static/live.js` only adds live
progress to the run page and `static/forms.js` re-renders the target form
when the kind changes.
"""

from __future__ import annotations

from fastapi import APIRouter

from app.web import (
    diff_page,
    evidence,
    login,
    overview,
    parity_page,
    reference_client,
    run_form,
    run_page,
    runs_page,
    scale_pages,
    spec,
    tap_form,
    tap_page,
    target_forms,
    target_page,
)

router = APIRouter()
# tap_form and target_forms first: `/targets/new-tap` and `/targets/new` must win over `/targets/{name}`.
for module in (
    overview,
    tap_form,
    target_forms,
    target_page,
    run_form,
    runs_page,
    run_page,
    evidence,
    diff_page,
    spec,
    login,
    scale_pages,
    parity_page,
    reference_client,
    tap_page,
):
    router.include_router(module.router)
