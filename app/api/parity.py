"""Parity runs and golden recordings: create and read a parity run, its comparison, and the goldens."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, HTTPException, Response, status
from sqlmodel import Session, SQLModel, select
from sqlmodel.main import SQLModelConfig

from app import crud, parity_runs, redaction
from app.api.schemas import documented_as
from app.deps import WRITE, RunDep, RunnerDep, SessionDep
from app.models import DB_INT_MAX, Golden, ParityRun, Run, RunPublic, Target

router = APIRouter(tags=["parity"])


class ParityRunCreate(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    first: str  # a target name: the run is one of its runs, on its worker label
    second: str | None = None  # a target of the same kind...
    golden: str | None = None  # ...or a stored golden recording
    options: dict[str, Any] | None = None  # the parity script's options (shared ones default to the first target's)
    trigger: Literal["api", "ci"] = "api"


class ParityRunPublic(RunPublic):
    worker_label: str  # where it executes: the first target's label
    second: str
    golden: str | None
    parity_status: str | None  # identical, divergent, undecided; None until finished
    divergence_count: int
    first_divergence: dict[str, Any] | None
    label_warning: str | None


class GoldenSave(SQLModel):
    model_config = SQLModelConfig(extra="forbid")

    name: str
    run_id: int
    side: int = 0  # 0: the first target's recording (A), 1: the second's (B)


class GoldenPublic(SQLModel):
    name: str
    kind: str
    source: str
    source_run_id: int | None
    script_version: str
    recorded_at: str
    summary: str


def _target(session: Session, name: str, field: str) -> Target:
    target = session.exec(select(Target).where(Target.name == name)).first()
    if target is None:
        raise crud.TargetInvalid([{"loc": [field], "msg": f"no target named {name!r}"}])
    return target


def _golden(session: Session, name: str) -> Golden:
    golden = session.exec(select(Golden).where(Golden.name == name)).first()
    if golden is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no golden named {name!r}")
    return golden


def _parity(session: Session, run: Run) -> ParityRun:
    parity = parity_runs.parity_of(session, run)
    if parity is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {run.id} is not a parity run")
    return parity


def parity_public(session: Session, run: Run, parity: ParityRun) -> ParityRunPublic:
    first = session.get(Target, run.target_id)
    second = session.get(Target, parity.second_target_id) if parity.second_target_id is not None else None
    result = parity.result or {}
    data = crud.run_public(run, first.name if first else "?").model_dump()
    data.update(
        second=parity.second_name,
        golden=parity.second_name.removeprefix("golden ") if parity.golden_id is not None else None,
        worker_label=run.worker_label,
        parity_status=parity.verdict,
        divergence_count=int(result.get("divergence_count", 0)),
        first_divergence=result.get("first"),
        label_warning=parity_runs.label_warning(first, second) if first else None,
    )
    return ParityRunPublic.model_validate(data)


def golden_public(golden: Golden) -> GoldenPublic:
    document = golden.document
    return GoldenPublic(
        name=golden.name,
        kind=golden.kind,
        source=redaction.redact_url(golden.source),
        source_run_id=golden.source_run_id,
        script_version=golden.script_version,
        recorded_at=str(document.get("recorded_at", "")),
        summary=str(document.get("summary", "")),
    )


@router.post("/parity-runs", status_code=status.HTTP_202_ACCEPTED, dependencies=[WRITE], summary="Queue a parity run")
def create_parity_run(data: ParityRunCreate, session: SessionDep, runner: RunnerDep) -> ParityRunPublic:
    """Two targets of one kind (`first`, `second`), or one target and a stored golden (`golden`).

    The run belongs to the first target and executes where its runs do (its worker
    label); `label_warning` says when the second target is labelled otherwise.
    """
    first = _target(session, data.first, "first")
    second = _target(session, data.second, "second") if data.second is not None else None
    golden = _golden(session, data.golden) if data.golden is not None else None
    run = parity_runs.enqueue_parity(
        session, first, second=second, golden=golden, options=data.options, trigger=data.trigger
    )
    runner.wake()
    return parity_public(session, run, _parity(session, run))


@router.get("/parity-runs/{run_id}", summary="A parity run: status, the other side, the first divergence")
def read_parity_run(run: RunDep, session: SessionDep) -> ParityRunPublic:
    return parity_public(session, run, _parity(session, run))


@router.get("/parity-runs/{run_id}/result", summary="The comparison: status, first divergence, kept divergences")
def read_parity_result(run: RunDep, session: SessionDep) -> dict[str, Any]:
    """The parity engine's result: `status`, `reason`, `divergence_count`, `first` and `divergences`
    (path, reason, both sides' values and bytes), `sides`. 409 until the comparison is done."""
    parity = _parity(session, run)
    if parity.result is None:
        raise HTTPException(status.HTTP_409_CONFLICT, f"run {run.id} is {run.status}; it has no comparison yet")
    return parity.result


@router.get("/goldens", summary="Stored golden recordings, newest first")
def list_goldens(session: SessionDep, kind: str | None = None) -> list[GoldenPublic]:
    return [golden_public(golden) for golden in parity_runs.goldens(session, kind)]


@router.post(
    "/goldens",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WRITE],
    summary="Save one side of a finished parity run as a golden",
)
def save_golden(data: GoldenSave, session: SessionDep) -> GoldenPublic:
    run = session.get(Run, data.run_id) if 0 <= data.run_id <= DB_INT_MAX else None
    if run is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no run {data.run_id}")
    return golden_public(parity_runs.save_golden(session, run, data.side, data.name))


@router.put(
    "/goldens/{name}",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WRITE],
    summary="Upload a golden file (as `rlconform parity --save-golden` writes it)",
)
def upload_golden(name: str, session: SessionDep, document: Annotated[dict[str, Any], Body()]) -> GoldenPublic:
    return golden_public(parity_runs.upload_golden(session, name, document))


@router.get(
    "/goldens/{name}/golden.json",
    summary="The golden file `rlconform parity --golden FILE` reads",
    **documented_as("application/json"),
)
def download_golden(name: str, session: SessionDep) -> Response:
    golden = _golden(session, name)
    body = json.dumps(golden.document, indent=1, sort_keys=True) + "\n"
    disposition = f'attachment; filename="{golden.name}.golden.json"'
    return Response(body, media_type="application/json", headers={"Content-Disposition": disposition})


@router.delete(
    "/goldens/{name}", status_code=status.HTTP_204_NO_CONTENT, dependencies=[WRITE], summary="Delete a golden"
)
def delete_golden(name: str, session: SessionDep) -> Response:
    session.delete(_golden(session, name))
    session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)
