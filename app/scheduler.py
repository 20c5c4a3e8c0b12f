"""Scheduled runs: targets with `schedule_minutes` get a run queued when one is due."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud
from app.models import Run, RunStatus, Target, stored_id, utcnow
from app.runner import Runner

log = logging.getLogger("rlconform.scheduler")


def enqueue_due(engine: Engine) -> list[int]:
    """Queue a run for every scheduled target whose interval has passed and that has none pending."""
    queued: list[int] = []
    now = utcnow()
    with Session(engine) as session:
        targets = session.exec(select(Target).where(col(Target.schedule_minutes).is_not(None))).all()
        for target in targets:
            last = session.exec(
                select(Run).where(Run.target_id == target.id).order_by(col(Run.created_at).desc()).limit(1)
            ).first()
            if last is not None and (
                last.status in (RunStatus.QUEUED, RunStatus.RUNNING)
                or now - last.created_at < timedelta(minutes=target.schedule_minutes or 0)
            ):
                continue
            try:
                queued.append(stored_id(crud.enqueue_run(session, target, trigger="schedule")))
            except crud.TargetInvalid as exc:
                log.warning("cannot schedule %s: %s", target.name, exc)
    return queued


class Scheduler:
    """Every `interval` seconds, queue runs for targets whose schedule is due."""

    def __init__(self, engine: Engine, runner: Runner, interval: float = 30.0) -> None:
        self.engine, self.runner, self.interval = engine, runner, interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="scheduler")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _loop(self) -> None:
        while True:
            try:
                if await asyncio.to_thread(enqueue_due, self.engine):
                    self.runner.wake()
            except Exception:
                log.exception("the scheduler failed to queue runs")
            await asyncio.sleep(self.interval)
