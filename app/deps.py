"""Dependencies routes share: the session, settings, runner, metrics, a valid target or run, the write token."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, HTTPException, Request, status
from sqlmodel import Session, select

from app.auth_limit import auth_limit, client_of
from app.metrics import Metrics
from app.models import DB_INT_MAX, Run, Target
from app.runner import RunBackend
from app.settings import Settings


def get_session(request: Request) -> Iterator[Session]:
    """A session on the app's engine for one request."""
    # In workers mode a queued run's job is deferred in the transaction that queues it (`crud.enqueue_run`).
    with Session(request.app.state.engine, info={"requeue": getattr(request.app.state, "requeue", None)}) as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def get_runner(request: Request) -> RunBackend:
    runner: RunBackend = request.app.state.runner
    return runner


RunnerDep = Annotated[RunBackend, Depends(get_runner)]


def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


MetricsDep = Annotated[Metrics, Depends(get_metrics)]


def valid_target(name: str, session: SessionDep) -> Target:
    target = session.exec(select(Target).where(Target.name == name)).first()
    if target is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no target named {name!r}")
    return target


TargetDep = Annotated[Target, Depends(valid_target)]


def valid_run(run_id: int, session: SessionDep) -> Run:
    run = session.get(Run, run_id) if 0 <= run_id <= DB_INT_MAX else None
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {run_id}")
    return run


RunDep = Annotated[Run, Depends(valid_run)]


def cross_site(request: Request) -> bool:
    """A browser request sent by another site's page (browsers add `Origin` to such writes)."""
    origin = request.headers.get("origin")
    return origin is not None and urlsplit(origin).netloc != request.headers.get("host")


def require_token(request: Request, settings: SettingsDep) -> None:
    """When an API token is configured, a write needs `Authorization: Bearer <token>`.

    Without a token, a page on another site could still start or cancel runs through a
    visitor's browser with a body-less POST (no CORS preflight), so such writes are refused.
    """
    if cross_site(request):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "writes from another site's pages are refused")
    if settings.api_token is None:
        return
    limit, client = auth_limit(request), client_of(request)
    limit.check(client)
    presented = request.headers.get("authorization")
    scheme, _, given = (presented or "").partition(" ")
    expected = settings.api_token.get_secret_value()
    if scheme.lower() != "bearer" or not secrets.compare_digest(given.strip().encode(), expected.encode()):
        if presented is not None:
            limit.failed(client)  # a guess; a missing header is none
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "this server needs an API token for writes: send Authorization: Bearer <token>",
            headers={"WWW-Authenticate": "Bearer"},
        )


# For a route decorator's `dependencies=[WRITE]`: checked before path lookups, so a 401 never reveals a 404.
WRITE = Depends(require_token)
