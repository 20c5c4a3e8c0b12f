"""Scheduled runs: each schedule (cron or interval) queues a run when a tick finds it due.

`fire_due(engine, tick)` is the one decision, whoever calls it: the
procrastinate periodic task on the operations queue (workers mode, with the
tick procrastinate hands it) or the in-process loop below (embedded mode).
A run records the schedule slot it was queued for, and a unique index on
(target, slot) makes a second dispatcher of the same tick a no-op, so each
tick fires once however many service replicas and workers run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from croniter import croniter
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app import crud, leases, webhooks
from app.models import Run, RunStatus, Schedule, Target, stored_id, utcnow
from app.settings import Settings

log = logging.getLogger("rlconform.scheduler")


def latest_tick(cron: str, now: datetime) -> datetime:
    """The latest time at or before `now` that `cron` names (a 6th field counts seconds)."""
    return croniter(cron, now.replace(microsecond=0) + timedelta(seconds=1)).get_prev(datetime).astimezone(UTC)


def due_slot(schedule: Schedule, last: datetime | None, tick: datetime) -> datetime | None:
    """The slot `schedule` is due for at `tick` (None: not due); `last` is its latest scheduled slot."""
    if schedule.cron is not None:
        slot = latest_tick(schedule.cron, tick)
        since = last or _aware(schedule.created_at)
        return slot if slot > since else None
    interval = timedelta(seconds=schedule.interval_seconds or 0)
    return tick if last is None or tick - last >= interval else None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def fire_due(engine: Engine, tick: datetime, requeue: leases.Requeue | None = None) -> list[int]:
    """Queue a run for every schedule due at `tick` whose target has no run still queued; the new run ids."""
    queued: list[int] = []
    with Session(engine, info={"requeue": requeue}) as session:
        for schedule, target in session.exec(select(Schedule, Target).where(Schedule.target_id == Target.id)).all():
            waiting = session.exec(
                select(Run.id).where(Run.target_id == target.id, Run.status == RunStatus.QUEUED).limit(1)
            ).first()
            if waiting is not None:  # the previous run has not even started: skip this tick
                continue
            last = session.exec(select(func.max(Run.scheduled_for)).where(Run.target_id == target.id)).one()
            slot = due_slot(schedule, _aware(last) if last else None, tick)
            if slot is None:
                continue
            try:
                run = crud.enqueue_run(
                    session,
                    target,
                    trigger="schedule",
                    scheduled_for=slot,
                    include_optional=schedule.include_destructive,
                )
            except IntegrityError:  # another dispatcher queued this slot first
                session.rollback()
            except crud.TargetInvalid as exc:
                session.rollback()
                log.warning("cannot schedule %s: %s", target.name, exc)
            else:
                queued.append(stored_id(run))
    return queued


class Scheduler:
    """Embedded mode: each tick queues due runs; the operations tick re-delivers webhooks."""

    def __init__(self, engine: Engine, settings: Settings, wake: Callable[[], None]) -> None:
        self.engine, self.settings, self.wake = engine, settings, wake
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._every(self.settings.schedule_tick_cron, self._schedules), name="schedules"),
            asyncio.create_task(self._every(self.settings.ops_tick_cron, self._webhooks), name="webhooks"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _schedules(self, tick: datetime) -> None:
        if await asyncio.to_thread(fire_due, self.engine, tick):
            self.wake()

    async def _webhooks(self, tick: datetime) -> None:
        settings = self.settings
        await webhooks.deliver_due(
            self.engine, settings.allowed_networks, settings.webhook_attempts, settings.webhook_backoff
        )

    async def _every(self, cron: str, action: Callable[[datetime], Awaitable[None]]) -> None:
        while True:
            following = croniter(cron, utcnow()).get_next(datetime).astimezone(UTC)
            await asyncio.sleep(max(0.0, (following - utcnow()).total_seconds()))
            try:
                await action(following)
            except Exception:
                log.exception("the scheduler's %s tick failed", action.__name__)


def enqueue_due(engine: Engine, requeue: leases.Requeue | None = None) -> list[int]:
    """Queue whatever is due now (the tick is the current second)."""
    return fire_due(engine, utcnow().replace(microsecond=0), requeue)
