"""Runs by id: status and progress, results, transcripts, JUnit, export, diff, cancel."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from sqlmodel import Session, col, select

from app import crud
from app.api.schemas import ClauseResultOut, RunExport, TranscriptPublic
from app.deps import DB_INT_MAX, WRITE, RunDep, SessionDep, parse_row_id
from app.models import ClauseResultRow, Run, RunPublic, RunStatus, Target, TranscriptRow
from checks.formats import render_junit

router = APIRouter(tags=["runs"])


def _target_name(session: Session, run: Run) -> str:
    return session.exec(select(Target.name).where(Target.id == run.target_id)).first() or "?"


def _results(session: Session, run: Run, after_id: int = 0) -> list[ClauseResultRow]:
    return list(
        session.exec(
            select(ClauseResultRow)
            .where(ClauseResultRow.run_id == run.id, col(ClauseResultRow.id) > after_id)
            .order_by(col(ClauseResultRow.id))
        )
    )


@router.get("/runs", summary="Runs, newest first")
def list_runs(
    session: SessionDep,
    target: str | None = None,
    status_: RunStatus | None = Query(None, alias="status"),
    limit: int = Query(50, ge=1, le=500),
    before_id: int | None = Query(None, ge=0, le=DB_INT_MAX + 1, description="Only runs with a smaller id (paging)"),
) -> list[RunPublic]:
    statement = select(Run)
    if target is not None:
        statement = statement.join(Target, col(Target.id) == Run.target_id).where(Target.name == target)
    if status_ is not None:
        statement = statement.where(Run.status == status_)
    if before_id is not None:
        statement = statement.where(col(Run.id) < before_id)
    runs = session.exec(statement.order_by(col(Run.id).desc()).limit(limit)).all()
    return crud.runs_public(session, runs)


@router.get("/runs/{run_id}", summary="A run's status, outcome and progress")
def read_run(run: RunDep, session: SessionDep) -> RunPublic:
    return crud.run_public(run, _target_name(session, run))


@router.get("/runs/{run_id}/results", summary="The run's clause results so far, in the order decided")
def read_results(
    run: RunDep,
    session: SessionDep,
    after_id: int = Query(0, ge=0, le=DB_INT_MAX, description="Only results with a larger id, for polling a live run"),
    verdict: str | None = None,
    phase: str | None = None,
) -> list[ClauseResultOut]:
    rows = _results(session, run, after_id)
    return [
        ClauseResultOut.model_validate(row, from_attributes=True)
        for row in rows
        if (verdict is None or row.verdict == verdict) and (phase is None or row.phase == phase)
    ]


@router.get("/runs/{run_id}/transcripts/{number}", summary="The wire transcript of one connection")
def read_transcript(run: RunDep, number: int, session: SessionDep) -> TranscriptPublic:
    row = (
        session.exec(
            select(TranscriptRow).where(TranscriptRow.run_id == run.id, TranscriptRow.number == number)
        ).first()
        if 0 <= number <= DB_INT_MAX
        else None
    )
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {run.id} has no transcript {number}")
    return TranscriptPublic.model_validate(row, from_attributes=True)


@router.get(
    "/runs/{run_id}/junit.xml",
    summary="JUnit XML: a testsuite per phase, a testcase per clause",
    response_class=Response,
    responses={200: {"content": {"application/xml": {}}}},
)
def read_junit(run: RunDep, session: SessionDep) -> Response:
    xml = render_junit([row.model_dump() for row in _results(session, run)], run.kind, run.expected_failures)
    return Response(xml, media_type="application/xml")


@router.get("/runs/{run_id}/export.json", summary="The run, its results and transcripts, secrets redacted")
def export_run(run: RunDep, session: SessionDep) -> RunExport:
    transcripts = session.exec(
        select(TranscriptRow).where(TranscriptRow.run_id == run.id).order_by(col(TranscriptRow.number))
    ).all()
    return RunExport(
        run=crud.run_public(run, _target_name(session, run)),
        results=[ClauseResultOut.model_validate(row, from_attributes=True) for row in _results(session, run)],
        transcripts=[TranscriptPublic.model_validate(row, from_attributes=True) for row in transcripts],
    )


@router.get("/runs/{run_id}/diff", summary="What changed against another run, or the last passing run")
def diff_run(
    run: RunDep,
    session: SessionDep,
    against: str = Query("baseline", description="A run id, `baseline` (last passing run) or `previous`"),
) -> dict[str, Any]:
    from app.history import diff_runs, last_passing_run, previous_run  # noqa: PLC0415

    base: Run | None
    if against == "baseline":
        target = session.get(Target, run.target_id)
        base = last_passing_run(session, target, before=run) if target is not None else None
        if base is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no passing run of this target before run {run.id}")
    elif against == "previous":
        base = previous_run(session, run)
        if base is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run of this target before run {run.id}")
    elif against.isascii() and against.isdigit():
        base_id = parse_row_id(against)
        base = session.get(Run, base_id) if base_id is not None else None
        if base is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {against}")
    else:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, "against must be a run id, baseline or previous")
    return diff_runs(session, base, run)


@router.post(
    "/runs/{run_id}/cancel", dependencies=[WRITE], summary="Cancel a queued or running run; decided clauses are kept"
)
async def cancel_run(request: Request, run: RunDep, session: SessionDep) -> RunPublic:
    await request.app.state.runner.cancel(run.id)

    def reload() -> RunPublic:
        session.expire_all()
        fresh = session.get(Run, run.id)
        return crud.run_public(fresh, _target_name(session, fresh))

    return await asyncio.to_thread(reload)
