"""What the dashboard says about workers: who is alive, what they run, which labels nobody serves.

In embedded mode the runs are executed by the service's run processes (`app.run_processes`)
beside its web process, or by the web process itself: those are listed instead.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, SQLModel, col, select

from app.models import Run, RunStatus, Target
from app.settings import Settings


class WorkerPublic(SQLModel):
    name: str
    host: str
    labels: list[str]
    concurrency: int
    heartbeat: datetime
    current_runs: list[int]


class RunProcessPublic(SQLModel):
    """A run process of the embedded service: what executes the runs it holds."""

    name: str  # host:pid:run-process, as its runs and their attempts name it
    pid: int
    host: str
    started_at: datetime | None
    ready: bool  # False while it starts, before it may be handed runs
    current_runs: list[int]
    last_renewal: datetime | None  # its newest lease renewal (or claim) of a run it holds


class WorkerStatus(SQLModel):
    mode: str  # embedded or workers
    workers: list[WorkerPublic]
    unserved_labels: dict[str, list[str]]  # label -> target names whose runs no live worker takes
    run_processes: list[RunProcessPublic] = []  # embedded mode: the processes beside the web process
    web_process_runs: list[int] = []  # embedded mode: the runs the web process executes itself


def embedded_status(session: Session, settings: Settings, runner: Any) -> WorkerStatus:
    """The embedded runner's run processes and the runs each holds, with their last lease renewal."""
    from app.run_processes import ProcessRunner
    from app.runner import Runner

    slots = runner.processes() if isinstance(runner, ProcessRunner) else []
    held = session.exec(
        select(Run.worker, func.max(Run.lease_until))
        .where(Run.status == RunStatus.RUNNING, col(Run.worker).in_([slot.name for slot in slots]))
        .group_by(col(Run.worker))
    ).all()
    lease = timedelta(seconds=settings.lease_seconds)  # a renewal sets the lease this far ahead
    renewed: dict[str | None, datetime] = {worker: until - lease for worker, until in held if until is not None}
    processes = [
        RunProcessPublic(
            name=slot.name,
            pid=slot.process.pid if slot.process is not None else 0,
            host=slot.name.rsplit(":", 2)[0],
            started_at=slot.started_at,
            ready=slot.ready,
            current_runs=sorted(slot.runs),
            last_renewal=renewed.get(slot.name),
        )
        for slot in slots
    ]
    own = sorted(runner.tasks) if isinstance(runner, Runner) else []
    return WorkerStatus(mode="embedded", workers=[], unserved_labels={}, run_processes=processes, web_process_runs=own)


def workers_status(session: Session, settings: Settings, runner: Any = None) -> WorkerStatus:
    if not settings.uses_workers:
        return embedded_status(session, settings, runner)
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
