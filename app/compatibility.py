"""The compatibility matrix: kinds x implementations x versions, from stored runs, and drift.

A row is one implementation at one version of one kind, as the runs' identities name them, with the
latest finished conformance run that checked it. A deployed version that no run checked is drift: it
gets a row of its own, marked, naming where it is deployed.
"""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import func
from sqlalchemy import select as select_columns
from sqlmodel import Session, SQLModel, col, select

from app.deployments import deployed
from app.models import ParityRun, Run, RunStatus, Target
from app.models_deploy import RunIdentity


class CompatibilityRow(SQLModel):
    kind: str
    implementation: str  # "" when no run of it named one
    version: str
    targets: list[str]
    runs: int  # finished conformance runs at this version
    run_id: int | None  # the latest of them
    outcome: str | None
    deployed_in: list[str]
    drift: bool  # deployed, and no run checked this version


def _checked(session: Session) -> dict[tuple[str, str, str], CompatibilityRow]:
    """(kind, implementation, version) -> its row, from every finished conformance run naming a version."""
    statement = (
        select_columns(
            col(Run.kind),
            col(RunIdentity.implementation),
            col(RunIdentity.version),
            col(Target.name),
            func.max(Run.id),
            func.count(),
        )
        .join(RunIdentity, col(RunIdentity.run_id) == Run.id)
        .join(Target, col(Target.id) == Run.target_id)
        .outerjoin(ParityRun, col(ParityRun.run_id) == Run.id)
        .where(
            col(Run.status) == RunStatus.FINISHED,
            col(RunIdentity.version).is_not(None),
            col(ParityRun.run_id).is_(None),
        )
        .group_by(col(Run.kind), col(RunIdentity.implementation), col(RunIdentity.version), col(Target.name))
    )
    rows: dict[tuple[str, str, str], CompatibilityRow] = {}
    for kind, implementation, version, target_name, latest, count in session.execute(statement).all():
        key = (kind, implementation or "", version or "")
        row = rows.setdefault(
            key,
            CompatibilityRow(
                kind=kind,
                implementation=key[1],
                version=key[2],
                targets=[],
                runs=0,
                run_id=None,
                outcome=None,
                deployed_in=[],
                drift=False,
            ),
        )
        row.targets = sorted({*row.targets, target_name})
        row.runs += int(count)
        row.run_id = max(row.run_id or 0, int(latest))
    outcomes = dict(
        session.exec(select(Run.id, Run.outcome).where(col(Run.id).in_([r.run_id for r in rows.values()]))).all()
    )
    for row in rows.values():
        outcome = outcomes.get(row.run_id)
        row.outcome = str(outcome) if outcome is not None else None
    return rows


def compatibility(session: Session) -> list[CompatibilityRow]:
    """Every checked implementation and version, then every deployed version no run checked (drift)."""
    rows = _checked(session)
    by_target: dict[tuple[str, str], list[CompatibilityRow]] = defaultdict(list)
    for row in rows.values():
        for name in row.targets:
            by_target[(name, row.version)].append(row)
    for deployment, target in deployed(session):
        checked = by_target.get((target.name, deployment.version))
        if checked:
            for row in checked:
                row.deployed_in = sorted({*row.deployed_in, deployment.environment})
            continue
        drift = CompatibilityRow(
            kind=target.kind,
            implementation="",
            version=deployment.version,
            targets=[target.name],
            runs=0,
            run_id=None,
            outcome=None,
            deployed_in=[deployment.environment],
            drift=True,
        )
        by_target[(target.name, deployment.version)] = [drift]
        rows[(target.kind, f"\0{target.name}", deployment.version)] = drift
    # Drift first (it wants attention), then the newest checked version first.
    return sorted(rows.values(), key=lambda r: (r.kind, r.implementation, not r.drift, -(r.run_id or 0), r.version))
