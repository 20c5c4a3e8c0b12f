"""Runs by id: status and progress, results, transcripts, JUnit, export, diff, cancel."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Query, Response, status
from sqlmodel import Session, col, select

from app import crud
from app.api.schemas import ClauseResultOut, ParityComparison, RunExport, RunOut, TranscriptPublic, documented_as
from app.deps import WRITE, RunDep, RunnerDep, SessionDep
from app.history import comparison_run, diff_runs, narrow_to_type, runs_with_parity
from app.models import (
    DB_INT_MAX,
    ClauseResultRow,
    ParityRun,
    Run,
    RunDiff,
    RunPublic,
    RunStatus,
    Target,
    TranscriptRow,
)
from checks.core import Outcome
from checks.formats import render_junit

router = APIRouter(tags=["runs"])


def _target_name(session: Session, run: Run) -> str:
    return session.exec(select(Target.name).where(Target.id == run.target_id)).first() or "?"


def _public(session: Session, run: Run) -> RunPublic:
    return crud.run_public(run, _target_name(session, run))


def _results(session: Session, run: Run, after_id: int = 0) -> list[ClauseResultRow]:
    return list(
        session.exec(
            select(ClauseResultRow)
            .where(ClauseResultRow.run_id == run.id, col(ClauseResultRow.id) > after_id)
            .order_by(col(ClauseResultRow.id))
        )
    )


def _typed(public: RunPublic, parity: ParityRun | None) -> RunOut:
    if parity is None:
        return RunOut(**public.model_dump(), type="conformance")
    comparison = ParityComparison(
        second=parity.second_name,
        comparison=parity.verdict,
        divergence_count=int((parity.result or {}).get("divergence_count", 0)),
    )
    return RunOut(**public.model_dump(), type="parity", parity=comparison)


@router.get("/runs", summary="Runs, newest first; conformance and parity runs filtered apart with `type`")
def list_runs(
    session: SessionDep,
    target: str | None = None,
    status_: Annotated[RunStatus | None, Query(alias="status")] = None,
    run_type: Annotated[
        Literal["conformance", "parity"] | None,
        Query(alias="type", description="Conformance runs only, or parity runs only; an `outcome` implies conformance"),
    ] = None,
    outcome: Annotated[Outcome | None, Query(description="A conformance verdict: parity runs never match")] = None,
    comparison: Annotated[
        Literal["identical", "divergent", "undecided"] | None,
        Query(description="What a parity run found: implies `type=parity`"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before_id: Annotated[
        int | None, Query(ge=0, le=DB_INT_MAX + 1, description="Only runs with a smaller id (paging)")
    ] = None,
) -> list[RunOut]:
    implied = "conformance" if outcome else "parity" if comparison else run_type
    if (outcome and comparison) or (run_type and implied != run_type):
        raise HTTPException(
            status.HTTP_422_UNPROCESSABLE_CONTENT,
            "an outcome filters conformance runs and a comparison parity runs: "
            f"type={run_type or ''!s} outcome={outcome or ''!s} comparison={comparison or ''!s} cannot all hold",
        )
    statement = narrow_to_type(runs_with_parity(), implied or "", comparison or "")
    if target is not None:
        statement = statement.where(Run.target_id == select(Target.id).where(Target.name == target).scalar_subquery())
    if status_ is not None:
        statement = statement.where(Run.status == status_)
    if outcome is not None:
        statement = statement.where(Run.outcome == outcome)
    if before_id is not None:
        statement = statement.where(col(Run.id) < before_id)
    rows = session.exec(statement.order_by(col(Run.id).desc()).limit(limit)).all()
    publics = crud.runs_public(session, [run for run, _ in rows])
    return [_typed(public, parity) for public, (_, parity) in zip(publics, rows, strict=True)]


@router.get("/runs/{run_id}", summary="A run's status, outcome and progress; a parity run's comparison")
def read_run(run: RunDep, session: SessionDep) -> RunOut:
    return _typed(_public(session, run), session.get(ParityRun, run.id))


@router.get("/runs/{run_id}/results", summary="The run's clause results so far, in the order decided")
def read_results(
    run: RunDep,
    session: SessionDep,
    after_id: Annotated[
        int, Query(ge=0, le=DB_INT_MAX, description="Only results with a larger id, for polling a live run")
    ] = 0,
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
    **documented_as("application/xml"),
)
def read_junit(run: RunDep, session: SessionDep) -> Response:
    results = [ClauseResultOut.model_validate(row, from_attributes=True).model_dump() for row in _results(session, run)]
    xml = render_junit(results, run.kind, run.expected_failures)
    return Response(xml, media_type="application/xml")


@router.get("/runs/{run_id}/export.json", summary="The run, its results and transcripts, secrets redacted")
def export_run(run: RunDep, session: SessionDep) -> RunExport:
    transcripts = session.exec(
        select(TranscriptRow).where(TranscriptRow.run_id == run.id).order_by(col(TranscriptRow.number))
    ).all()
    return RunExport(
        run=_public(session, run),
        results=[ClauseResultOut.model_validate(row, from_attributes=True) for row in _results(session, run)],
        transcripts=[TranscriptPublic.model_validate(row, from_attributes=True) for row in transcripts],
    )


@router.get("/runs/{run_id}/diff", summary="What changed against another run, or the last passing run")
def diff_run(
    run: RunDep,
    session: SessionDep,
    against: Annotated[str, Query(description="A run id, `baseline` (last passing run) or `previous`")] = "baseline",
) -> RunDiff:
    try:
        base = comparison_run(session, run, against)
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from None
    if base is None:
        missing = {
            "baseline": f"no passing run of this target before run {run.id}",
            "previous": f"no run of this target before run {run.id}",
        }
        raise HTTPException(status.HTTP_404_NOT_FOUND, missing.get(against, f"no run {against}"))
    return diff_runs(session, base, run)


@router.post(
    "/runs/{run_id}/cancel", dependencies=[WRITE], summary="Cancel a queued or running run; decided clauses are kept"
)
async def cancel_run(runner: RunnerDep, run: RunDep, session: SessionDep) -> RunPublic:
    await runner.cancel(run.id or 0)

    def reload() -> RunPublic:
        session.refresh(run)
        return _public(session, run)

    return await asyncio.to_thread(reload)
