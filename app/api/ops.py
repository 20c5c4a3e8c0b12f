"""Operations endpoints outside /api/v1: health, Prometheus metrics and status badges."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from sqlalchemy import text
from sqlmodel import col, select

from app.api.schemas import Health, documented_as
from app.db import check_write, full_message, is_disk_full, space_problem
from app.deps import MetricsDep, SessionDep
from app.history import conformance_runs
from app.models import Run, RunStatus, Target
from app.textsafe import xml_safe
from checks.core import HARNESS_VERSION

router = APIRouter(tags=["operations"])

BADGE_COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "error": "#ef6c00", "no runs": "#757575", "unknown": "#757575"}


@router.get("/healthz", summary="Liveness and database reachability", response_model=Health)
def healthz(session: SessionDep) -> Response:
    """Reads and a committed write: a database on a full disk still answers reads."""
    try:
        session.connection().execute(text("SELECT 1"))
        check_write(session)
        problem = space_problem(session.get_bind().engine)
    except Exception as exc:  # report, don't raise: the probe wants a status
        problem = full_message(exc) if is_disk_full(exc) else type(exc).__name__
    if problem:
        body = Health(status="unhealthy", harness_version=HARNESS_VERSION, database=problem)
        return JSONResponse(body.model_dump(), status_code=503)
    return JSONResponse(Health(status="ok", harness_version=HARNESS_VERSION, database="ok").model_dump())


@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
def metrics(metrics: MetricsDep, session: SessionDep) -> PlainTextResponse:
    return PlainTextResponse(metrics.render(session), media_type="text/plain; version=0.0.4")


def badge_svg(label: str, value: str, colour: str) -> str:
    """A flat two-part badge; widths from a rough per-character estimate."""
    left, right = 6 * len(label) + 12, 6 * len(value) + 12
    label, value = escape(label), escape(value)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + right}" height="20" role="img" '
        f'aria-label="{label}: {value}"><title>{label}: {value}</title>'
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<g fill="#fff" text-anchor="middle" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2}" y="14">{label}</text><text x="{left + right / 2}" y="14">{value}</text></g></svg>'
    )


@router.get(
    "/badge/{name}.svg",
    summary="The target's own gate status: the outcome of its last finished run",
    **documented_as("image/svg+xml"),
)
def badge(name: str, session: SessionDep) -> Response:
    target = session.exec(select(Target).where(Target.name == name)).first()
    if target is None:
        value, code = "unknown target", 404
    else:
        last = session.exec(
            select(Run.outcome)
            .where(Run.target_id == target.id, Run.status == RunStatus.FINISHED, conformance_runs())
            .order_by(col(Run.created_at).desc(), col(Run.id).desc())
            .limit(1)
        ).first()
        value, code = (last or "no runs"), 200
    svg = badge_svg(xml_safe(name[:40]), value, BADGE_COLOURS.get(value, BADGE_COLOURS["unknown"]))
    return Response(svg, status_code=code, media_type="image/svg+xml", headers={"Cache-Control": "no-cache"})
