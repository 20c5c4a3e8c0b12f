"""Can I deploy: a run's version, deployments and environments, the answer, and the compatibility matrix."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Response, status

from app import deployments
from app.can_i_deploy import DeployAnswer, can_i_deploy
from app.compatibility import CompatibilityRow, compatibility
from app.deps import WRITE, RunDep, SessionDep, valid_target
from app.models_deploy import (
    NAME_PATTERN,
    VERSION_PATTERN,
    DeploymentCreate,
    DeploymentPublic,
    EnvironmentPublic,
    RunIdentityPublic,
    VersionGiven,
)

router = APIRouter(prefix="/api/v1", tags=["deploy"])

TargetName = Annotated[str, Query(min_length=1, max_length=64, description="A target's name")]
Version = Annotated[
    str, Query(min_length=1, max_length=128, pattern=VERSION_PATTERN, description="A version, as CI names it")
]
EnvironmentName = Annotated[
    str, Query(min_length=1, max_length=64, pattern=NAME_PATTERN, description="An environment's name")
]


@router.put("/runs/{run_id}/version", dependencies=[WRITE], summary="Name the version a run checked (CI's)")
def give_version(run: RunDep, given: VersionGiven, session: SessionDep) -> RunIdentityPublic:
    """A version given wins over one the service reads from the wire once the run ends."""
    return deployments.identity_public(deployments.give_version(session, run.id or 0, given))


@router.get("/runs/{run_id}/identity", summary="The implementation and version a run checked, and who said so")
def read_identity(run: RunDep, session: SessionDep) -> RunIdentityPublic:
    identity = deployments.identity_of(session, run.id)
    if identity is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"run {run.id} names no implementation nor version")
    return deployments.identity_public(identity)


@router.post(
    "/deployments",
    status_code=status.HTTP_201_CREATED,
    dependencies=[WRITE],
    summary="Record that a target's version is deployed in an environment",
)
def record_deployment(data: DeploymentCreate, session: SessionDep) -> DeploymentPublic:
    """An environment holds one current version per target: recording another replaces it. With
    `released`, the version is kept beside the current one (as Pact's record-release)."""
    target = valid_target(data.target, session)
    return deployments.deployment_public(deployments.record_deployment(session, target, data), target)


@router.delete(
    "/deployments",
    status_code=status.HTTP_204_NO_CONTENT,
    dependencies=[WRITE],
    summary="Record that a target (or one version of it) no longer runs in an environment",
)
def remove_deployment(
    target: TargetName,
    environment: EnvironmentName,
    session: SessionDep,
    version: Annotated[
        str | None, Query(min_length=1, max_length=128, pattern=VERSION_PATTERN, description="Only this version")
    ] = None,
) -> Response:
    """As Pact's record-undeployment. 404 when nothing of the target was recorded there."""
    stored = valid_target(target, session)
    if not deployments.remove_deployment(session, stored, environment, version):
        what = f"{target} {version}" if version else target
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{what} is not recorded as deployed in {environment}")
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/environments", summary="What is deployed where")
def list_environments(session: SessionDep) -> list[EnvironmentPublic]:
    return deployments.environments(session)


@router.get("/can-i-deploy", summary="Can a target's version go to an environment: yes, no or unknown, and why")
def read_can_i_deploy(target: TargetName, version: Version, to: EnvironmentName, session: SessionDep) -> DeployAnswer:
    """The target at `version`, and each counterpart deployed in `to` at its version, decided by its latest
    finished run there: reasons `passed`, `failed` (with the clauses), `never-checked`, `version-unknown`,
    `older-spec`. `exit_code` is what `rlconform can-i-deploy` exits with: 0 yes, 1 no, 2 unknown."""
    return can_i_deploy(session, valid_target(target, session), version, to)


@router.get("/compatibility", summary="Kinds x implementations x versions from stored runs, drift marked")
def read_compatibility(session: SessionDep) -> list[CompatibilityRow]:
    return compatibility(session)
