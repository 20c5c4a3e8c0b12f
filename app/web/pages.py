"""The router every page module uses: an error a page raises (no such run, target, kind or clause) is shown as
a page with the navigation and a sentence saying what is missing, where the API answers JSON."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from http import HTTPStatus
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.routing import APIRoute

from app.web.templating import templates

# Where a person goes next from an error page, by the first part of the path that failed.
BACK_LINKS = {"runs": "/runs", "targets": "/", "parity": "/runs?type=parity", "matrix": "/matrix", "spec": "/spec"}


class PageRoute(APIRoute):
    """A page route: an HTTPException becomes the message page, with the exception's status and detail."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except HTTPException as exc:
                if exc.status_code < 400 or request.url.path.startswith("/api/"):
                    raise
                return error_page(request, exc)

        return page_handler


def error_page(request: Request, exc: HTTPException) -> Response:
    title = HTTPStatus(exc.status_code).phrase if exc.status_code in HTTPStatus._value2member_map_ else "Error"
    detail = exc.detail if isinstance(exc.detail, str) else "the request could not be served"
    section = request.url.path.strip("/").split("/")[0]
    context = {"title": title, "messages": [sentence(detail)], "back": BACK_LINKS.get(section, "/")}
    return templates.TemplateResponse(
        request, "message.html", context, status_code=exc.status_code, headers=exc.headers
    )


def sentence(detail: str) -> str:
    """`no run 9` as a sentence: "There is no run 9."."""
    if detail.startswith("no "):
        detail = f"There is {detail}"
    detail = detail[:1].upper() + detail[1:]
    return detail if detail.endswith((".", "?", "!")) else detail + "."


def wants_page(request: Request) -> bool:
    """A browser asking for a page (not the API): an error is shown to it as a page too."""
    return not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", "")


def not_a_page(request: Request, exc: RequestValidationError) -> str | None:
    """For a browser, a path id that is not one (`/runs/abc`) as what is missing ("no run 'abc'"); else None."""
    errors = exc.errors()
    if not wants_page(request) or not errors or any(error.get("loc", ("",))[0] != "path" for error in errors):
        return None
    loc, value = errors[0]["loc"], errors[0].get("input")
    return f"no {str(loc[-1]).removesuffix('_id').replace('_', ' ')} {value!r}"


def page_router() -> APIRouter:
    return APIRouter(route_class=PageRoute)
