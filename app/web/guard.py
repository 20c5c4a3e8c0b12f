"""Protection for the pages' POST forms: same-origin only, and the API token when one is set.

Browsers send `Origin` with form posts; a post from another site is refused,
so a hostile page cannot start runs or delete targets through a visitor's
browser. With `RLCONFORM_API_TOKEN` set, writes from the browser need the
token too; `/login` keeps it in a same-site, HTTP-only cookie.
"""

from __future__ import annotations

import hmac
from urllib.parse import quote, urlsplit

from fastapi import Depends, HTTPException, Request

from app.deps import cross_site, get_app_settings

TOKEN_COOKIE = "rlconform_token"


def token_required(request: Request) -> bool:
    return get_app_settings(request).api_token is not None


def token_matches(request: Request, supplied: str) -> bool:
    token = get_app_settings(request).api_token
    return token is None or hmac.compare_digest(supplied.encode(), token.get_secret_value().encode())


def safe_next(target: str | None) -> str:
    """A local path to go back to; anything else (another host, `//evil`) becomes `/`."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def guard_write(request: Request) -> None:
    if cross_site(request):
        raise HTTPException(status_code=403, detail="form posts from another site are refused")
    if not token_matches(request, request.cookies.get(TOKEN_COOKIE, "")):
        referer = urlsplit(request.headers.get("referer", "")).path
        raise HTTPException(status_code=303, headers={"Location": f"/login?next={quote(safe_next(referer))}"})


WriteGuard = Depends(guard_write)
