"""`/login`: enter the API token once so the browser's forms may write (only when a token is set)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.auth_limit import auth_limit, client_of
from app.web.guard import TOKEN_COOKIE, safe_next, token_matches, token_required
from app.web.pages import page_router
from app.web.templating import templates

router = page_router()


@router.get("/login", response_class=HTMLResponse, include_in_schema=False)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    context = {"next": safe_next(next), "error": None, "required": token_required(request)}
    return templates.TemplateResponse(request, "login.html", context)


@router.post("/login", include_in_schema=False)
def login(request: Request, token: Annotated[str, Form()] = "", next: Annotated[str, Form()] = "/") -> Response:
    limit, client = auth_limit(request), client_of(request)
    if token_required(request):
        limit.check(client)
    if not token_required(request) or not token_matches(request, token):
        if token_required(request):
            limit.failed(client)
        context = {
            "next": safe_next(next),
            "error": "That is not the service's API token.",
            "required": token_required(request),
        }
        return templates.TemplateResponse(
            request, "login.html", context, status_code=400 if token_required(request) else 200
        )
    response = RedirectResponse(safe_next(next), status_code=303)
    response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/")
    return response
