"""Storing what "can I deploy?" reads: each run's implementation and version, and what is deployed where.

A version CI gives (`give_version`) wins over one read from the wire (`record_wire_identity`), whichever
is written first: the wire then only adds the implementation and its evidence. `read_identity` is the
executor's one call once a run's suite has ended; it never fails the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from app.models import Target, utcnow
from app.models_deploy import (
    Deployment,
    DeploymentCreate,
    DeploymentPublic,
    EnvironmentPublic,
    RunIdentity,
    RunIdentityPublic,
    VersionGiven,
)
from app.textsafe import storable
from checks.identity import Identity, identify, readable

log = logging.getLogger("rlconform.deploy")

IDENTITY_TIMEOUT = 5.0  # at most this long (or the run's own `timeout`, if shorter) to read an identity
T = TypeVar("T")


def _once_more_on_conflict(session: Session, write: Callable[[], T]) -> T:
    """The row `write` makes or changes, stored, committed and read back; when a concurrent writer inserted
    the same key first, `write` once more over its row."""

    def store() -> T:
        row = write()
        session.add(row)
        session.flush()
        session.commit()
        return row

    try:
        row = store()
    except IntegrityError:
        session.rollback()
        row = store()
    session.refresh(row)
    return row


# ---------------------------------------------------------------- run identities


def identity_public(identity: RunIdentity) -> RunIdentityPublic:
    return RunIdentityPublic.model_validate(identity, from_attributes=True)


def give_version(session: Session, run_id: int, given: VersionGiven) -> RunIdentity:
    """The version CI names for the run (and its implementation, when named), over anything the wire said."""

    def write() -> RunIdentity:
        identity = session.get(RunIdentity, run_id) or RunIdentity(run_id=run_id, source="given")
        identity.version, identity.source, identity.read_at = given.version, "given", utcnow()
        identity.implementation = given.implementation or identity.implementation
        return identity

    return _once_more_on_conflict(session, write)


def record_wire_identity(engine: Engine, run_id: int, seen: Identity) -> None:
    """What the wire showed for the run; a version CI already gave stays.

    The texts are the target's: NUL and lone surrogates are escaped before they are stored or shown."""
    implementation, version, evidence = storable([seen.implementation, seen.version, seen.evidence[:500]])
    seen = Identity(implementation, version, evidence)
    with Session(engine) as session:

        def write() -> RunIdentity:
            identity = session.get(RunIdentity, run_id)
            if identity is None:
                identity = RunIdentity(run_id=run_id, version=seen.version, source="wire")
            elif identity.source == "wire":
                identity.version = seen.version
            identity.implementation = seen.implementation or identity.implementation
            identity.evidence = seen.evidence[:500]  # escaping may have lengthened it
            identity.read_at = utcnow()
            return identity

        _once_more_on_conflict(session, write)


async def read_identity(engine: Engine, run_id: int, kind: str, url: str, options: Any) -> None:
    """Read the target's identity from the wire, once its suite ended, and store it; failures leave none."""
    if not readable(kind):
        return
    timeout = min(float(getattr(options, "timeout", IDENTITY_TIMEOUT) or IDENTITY_TIMEOUT), IDENTITY_TIMEOUT)
    try:
        seen = await identify(kind, url, options, timeout)
        if seen is not None:
            await asyncio.to_thread(record_wire_identity, engine, run_id, seen)
    except Exception:  # an identity is a nicety: the run's verdicts are already recorded
        log.warning("run %s: its identity could not be read or stored", run_id, exc_info=True)


def identity_of(session: Session, run_id: int | None) -> RunIdentity | None:
    return session.get(RunIdentity, run_id) if run_id is not None else None


# ---------------------------------------------------------------- deployments


def deployment_public(deployment: Deployment, target: Target) -> DeploymentPublic:
    return DeploymentPublic(
        environment=deployment.environment,
        target=target.name,
        kind=target.kind,
        version=deployment.version,
        released=deployment.released,
        recorded_at=deployment.recorded_at,
    )


def record_deployment(session: Session, target: Target, data: DeploymentCreate) -> Deployment:
    """`target` runs `data.version` in `data.environment`: its current version there, or a released one."""

    def write() -> Deployment:
        if not data.released:  # one current version per target and environment: another one is replaced
            session.exec(
                delete(Deployment).where(
                    col(Deployment.environment) == data.environment,
                    col(Deployment.target_id) == target.id,
                    col(Deployment.released).is_(False),
                    col(Deployment.version) != data.version,
                )
            )
        found = session.exec(
            select(Deployment).where(
                Deployment.environment == data.environment,
                Deployment.target_id == target.id,
                Deployment.version == data.version,
                Deployment.released == data.released,
            )
        ).first()
        deployment = found or Deployment(
            environment=data.environment, target_id=target.id or 0, version=data.version, released=data.released
        )
        deployment.recorded_at = utcnow()
        return deployment

    return _once_more_on_conflict(session, write)


def remove_deployment(session: Session, target: Target, environment: str, version: str | None) -> int:
    """`target` no longer runs in `environment` (only `version` of it, when given); how many rows went."""
    statement = delete(Deployment).where(
        col(Deployment.environment) == environment, col(Deployment.target_id) == target.id
    )
    if version is not None:
        statement = statement.where(col(Deployment.version) == version)
    removed = session.exec(statement).rowcount
    session.commit()
    return int(removed or 0)


def deployed(session: Session, environment: str | None = None) -> list[tuple[Deployment, Target]]:
    """What is deployed (in `environment`, or everywhere): each target's current version, then released ones.

    Were two current versions of one target ever recorded at once, the newest is the current one.
    """
    statement = select(Deployment, Target).where(Deployment.target_id == Target.id)
    if environment is not None:
        statement = statement.where(Deployment.environment == environment)
    rows = session.exec(statement.order_by(col(Deployment.recorded_at).desc(), col(Deployment.id).desc())).all()
    current: set[tuple[str, int | None]] = set()
    kept: list[tuple[Deployment, Target]] = []
    for deployment, target in rows:
        if not deployment.released:
            if (deployment.environment, target.id) in current:
                continue
            current.add((deployment.environment, target.id))
        kept.append((deployment, target))
    return sorted(kept, key=lambda pair: (pair[0].environment, pair[1].name, pair[0].released, pair[0].version))


def environments(session: Session) -> list[EnvironmentPublic]:
    by_name: dict[str, list[DeploymentPublic]] = defaultdict(list)
    for deployment, target in deployed(session):
        by_name[deployment.environment].append(deployment_public(deployment, target))
    return [EnvironmentPublic(name=name, deployments=rows) for name, rows in sorted(by_name.items())]


def environment_names(session: Session) -> list[str]:
    return sorted(set(session.exec(select(Deployment.environment)).all()))
