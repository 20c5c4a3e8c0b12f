"""What the dashboard says about workers: who is alive, what they run, which labels nobody serves."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, SQLModel, col, select

from app.models import Target
from app.settings import Settings


class WorkerPublic(SQLModel):
    name: str
    host: str
    labels: list[str]
    concurrency: int
    heartbeat: datetime
    current_runs: list[int]


class WorkerStatus(SQLModel):
    mode: str  # embedded or workers
    workers: list[WorkerPublic]
    unserved_labels: dict[str, list[str]]  # label -> target names whose runs no live worker takes


def workers_status(session: Session, settings: Settings) -> WorkerStatus:
    if not settings.uses_workers:
        return WorkerStatus(mode="embedded", workers=[], unserved_labels={})
    from app.worker import current_runs, live_workers

    live = live_workers(session, settings.worker_heartbeat)
    held = current_runs(session)
    served = {label for worker in live for label in worker.labels}
    unserved: dict[str, list[str]] = {}
    for name, label in session.exec(select(Target.name, Target.worker_label).order_by(col(Target.name))):
        if label not in served:
            unserved.setdefault(label, []).append(name)
    workers = [
        WorkerPublic(**worker.model_dump(exclude={"started_at"}), current_runs=held.get(worker.name, []))
        for worker in live
    ]
    return WorkerStatus(mode="workers", workers=workers, unserved_labels=unserved)


def label_warning(session: Session, settings: Settings, target: Target) -> str:
    """A sentence for the target page when no live worker serves the target's label, else ""."""
    if not settings.uses_workers:
        return ""
    from app.worker import live_workers

    if any(target.worker_label in worker.labels for worker in live_workers(session, settings.worker_heartbeat)):
        return ""
    return (
        f"No live worker serves the label {target.worker_label!r}: runs of this target wait in the queue "
        f"until `rlconform worker --label {target.worker_label}` runs beside it."
    )
