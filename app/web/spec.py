"""`/spec`: SPEC.md rendered, every clause line anchored by its clause id."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse

from app.deps import SettingsDep
from app.spec_page import render_spec
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()


@router.get("/spec", response_class=HTMLResponse, include_in_schema=False)
def spec_page(request: Request, settings: SettingsDep) -> HTMLResponse:
    html, clause_ids = render_spec(settings.spec_path)
    return templates.TemplateResponse(
        request, "spec.html", {"spec_html": html, "clause_count": len(clause_ids), "nav": "spec"}
    )
