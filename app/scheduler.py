"""Scheduled runs: each schedule (cron or interval) queues a run when a tick finds it due.

`fire_due(engine, tick)` is the one decision, whoever calls it: the
procrastinate periodic task on the operations queue (workers mode, with the
tick procrastinate hands it) or the in-process loop below (embedded mode).
Ticks come every second by default, so a run is queued within about a second
of its own due time.

An interval schedule comes due at `anchor + offset + k * interval`, where
the offset within the interval is the target's own (`spread_offset`,
Fibonacci hashing of its id): stable across processes and restarts, and
consecutive ids land evenly apart, so a fleet of targets on one interval is
spread over it instead of coming due in one burst (Prometheus spreads its
scrapes the same way). A cron schedule comes due at the times it names.

A run records the due time (slot) it was queued for, and a unique index on
(target, slot) makes a second dispatcher of the same slot a no-op, so each
slot fires once however many service replicas and workers run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime, timedelta

from croniter import croniter
from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app import crud, leases, retention, webhooks
from app.models import Run, RunStatus, Schedule, Target, stored_id, utcnow
from app.settings import Settings

log = logging.getLogger("rlconform.scheduler")

ANCHOR = datetime(1970, 1, 1, tzinfo=UTC)  # interval grids count from here, so every process agrees
FIBONACCI = 0x9E3779B97F4A7C15  # 2**64 / golden ratio: consecutive ids land ~0.618 of a period apart


def latest_tick(cron: str, now: datetime) -> datetime:
    """The latest time at or before `now` that `cron` names (a 6th field counts seconds)."""
    tick: datetime = croniter(cron, now.replace(microsecond=0) + timedelta(seconds=1)).get_prev(datetime)
    return tick.astimezone(UTC)


def spread_offset(target_id: int, interval: timedelta) -> timedelta:
    """Where within each `interval` the target comes due, to the millisecond; integer maths, so stable anywhere."""
    period_ms = int(interval / timedelta(milliseconds=1))
    fraction = (target_id * FIBONACCI) % 2**64
    return timedelta(milliseconds=(fraction * period_ms) >> 64)


def latest_slot(target_id: int, interval: timedelta, now: datetime) -> datetime:
    """The target's latest due time at or before `now` on its interval grid."""
    origin = ANCHOR + spread_offset(target_id, interval)
    return origin + ((now - origin) // interval) * interval


def due_slot(schedule: Schedule, last: datetime | None, tick: datetime) -> datetime | None:
    """The slot `schedule` is due for at `tick` (None: not due); `last` is its latest scheduled slot.

    Only the latest slot is ever due, so a tick skipped (downtime, a run still
    queued) is made up once, not once per missed slot; a new schedule waits for
    its first slot instead of firing at once.
    """
    if schedule.cron is not None:
        slot = latest_tick(schedule.cron, tick)
    else:
        slot = latest_slot(schedule.target_id, timedelta(seconds=schedule.interval_seconds or 60), tick)
    since = last or _aware(schedule.created_at) - timedelta(microseconds=1)
    return slot if slot > since else None


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def fire_due(engine: Engine, tick: datetime, requeue: leases.Requeue | None = None) -> list[int]:
    """Queue a run for every schedule due at `tick` whose target has no run still queued; the new run ids."""
    latest = select(func.max(Run.scheduled_for)).where(Run.target_id == Schedule.target_id).scalar_subquery()
    queued: list[int] = []
    with Session(engine, info={"requeue": requeue}) as session:
        due: dict[int, tuple[Schedule, datetime]] = {}
        for schedule, last in session.exec(select(Schedule, latest)).all():
            slot = due_slot(schedule, _aware(last) if last else None, tick)
            if slot is not None:
                due[schedule.target_id] = (schedule, slot)
        for target in _without_queued_runs(session, due):  # the previous run has not even started: skip
            schedule, slot = due[stored_id(target)]
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


def _without_queued_runs(session: Session, target_ids: Iterable[int]) -> list[Target]:
    ids = list(target_ids)
    if not ids:
        return []
    waiting = select(Run.target_id).where(col(Run.target_id).in_(ids), Run.status == RunStatus.QUEUED)
    busy = set(session.exec(waiting).all())
    return list(session.exec(select(Target).where(col(Target.id).in_([i for i in ids if i not in busy]))).all())


class Scheduler:
    """Embedded mode: each tick queues due runs; the operations tick re-delivers webhooks."""

    def __init__(self, engine: Engine, settings: Settings, wake: Callable[[], None]) -> None:
        self.engine, self.settings, self.wake = engine, settings, wake
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._every(self.settings.schedule_tick_cron, self._schedules), name="schedules"),
            asyncio.create_task(self._every(self.settings.ops_tick_cron, self._webhooks), name="webhooks"),
            asyncio.create_task(self._every(self.settings.retention_tick_cron, self._retention), name="retention"),
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

    async def _retention(self, tick: datetime) -> None:
        settings = self.settings
        await asyncio.to_thread(retention.sweep, self.engine, settings.retention_runs, settings.retention_whole_passing)

    async def _every(self, cron: str, action: Callable[[datetime], Awaitable[None]]) -> None:
        while True:
            following = croniter(cron, utcnow()).get_next(datetime).astimezone(UTC)
            await asyncio.sleep(max(0.0, (following - utcnow()).total_seconds()))
            try:
                await action(following)
            except Exception:
                log.exception("the scheduler's %s tick failed", action.__name__)
