"""Targets by unique name: create, read, update, delete, start a run, history."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from sqlmodel import col, select

from app import crud
from app.deps import WRITE, RunnerDep, SessionDep, SettingsDep, TargetDep
from app.history import target_history
from app.models import (
    DB_INT_MAX,
    RunCreate,
    RunPublic,
    Target,
    TargetCreate,
    TargetHistory,
    TargetPublic,
    TargetUpdate,
)

router = APIRouter(tags=["targets"])


@router.get("/targets", summary="All targets")
def list_targets(session: SessionDep) -> list[TargetPublic]:
    targets = session.exec(select(Target).order_by(col(Target.name))).all()
    return [crud.target_public(target) for target in targets]


@router.post("/targets", dependencies=[WRITE], status_code=status.HTTP_201_CREATED, summary="Register a target")
def create_target(data: TargetCreate, session: SessionDep, settings: SettingsDep) -> TargetPublic:
    """422 with field paths (`["body", "options", "timeout"]`) when the input breaks a rule."""
    return crud.target_public(crud.create_target(session, data, settings.allowed_networks))


@router.get("/targets/{name}", summary="One target")
def read_target(target: TargetDep) -> TargetPublic:
    return crud.target_public(target)


@router.patch("/targets/{name}", dependencies=[WRITE], summary="Change a target")
def update_target(data: TargetUpdate, target: TargetDep, session: SessionDep, settings: SettingsDep) -> TargetPublic:
    """Send back a masked secret (`**********`) to keep the stored one."""
    return crud.target_public(crud.update_target(session, target, data, settings.allowed_networks))


@router.delete(
    "/targets/{name}",
    dependencies=[WRITE],
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a target and its runs",
)
async def delete_target(runner: RunnerDep, target: TargetDep, session: SessionDep) -> Response:
    await runner.delete_target(session, target)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    "/targets/{name}/runs",
    dependencies=[WRITE],
    status_code=status.HTTP_202_ACCEPTED,
    summary="Queue a run of the target's suite",
)
def start_run(runner: RunnerDep, target: TargetDep, session: SessionDep, data: RunCreate | None = None) -> RunPublic:
    """`phases` selects phases (default: the suite's default ones); `options` override the target's.

    `expected_failures` adds clause ids allowed to fail to the target's own
    list for this run; an id that is no clause of the kind (nor an alias of
    one) is a 422 naming it.
    """
    data = data or RunCreate()
    run = crud.enqueue_run(
        session,
        target,
        phases=data.phases,
        options=data.options,
        expected_failures=data.expected_failures,
        trigger=data.trigger,
    )
    runner.wake()
    return crud.run_public(run, target.name)


@router.get("/targets/{name}/history", summary="Clauses × the target's recent runs")
def read_history(
    target: TargetDep,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 30,
    before_id: Annotated[
        int | None, Query(ge=0, le=DB_INT_MAX + 1, description="Only runs older than this run id (paging)")
    ] = None,
) -> TargetHistory:
    return target_history(session, target, limit=limit, before_id=before_id)
