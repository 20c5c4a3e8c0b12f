"""Workers mode (PostgreSQL): the procrastinate app, its tasks, and the processes that consume them.

- `execute_run(run_id)` runs on the queue named by the target's worker label;
  it claims the run's lease and calls the same `Executor` the embedded runner uses.
- The operations queue carries three periodic tasks: schedules, lease
  recovery and webhook delivery. procrastinate defers each tick once (its
  unique periodic key), and every service process consumes the queue with a
  small in-process worker, so there is nothing extra to deploy.
- `rlconform worker --label L` runs `run_worker` beside a cluster, with only
  the database URL; `WorkerBackend` is what the service uses instead of the
  embedded `Runner`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import procrastinate
import procrastinate.worker
from procrastinate.job_context import AbortReason, JobContext
from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import leases, retention, scheduler, webhooks
from app.dispatch import EXECUTE_RUN, OPS_QUEUE, conninfo, defer_run
from app.executor import Executor
from app.leases import Ending
from app.metrics import Metrics
from app.models import ENDED_STATUSES, Run, RunStatus, Worker, utcnow
from app.netpolicy import Reach
from app.recording import EndWriter
from app.runner import CANCEL_WAIT, RunBackend, cancel_in_db
from app.settings import Settings

log = logging.getLogger("rlconform.worker")
STOP_MARGIN = 5.0  # seconds past the drain's grace before a worker that has not stopped is cancelled
RESTOP_EVERY = 0.5


def worker_name(labels: Sequence[str], role: str = "worker") -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{role}:{','.join(labels)}"[:200]


def make_executor(settings: Settings, engine: Engine, name: str, metrics: Metrics | None = None) -> Executor:
    return Executor(
        engine,
        worker=name,
        ends=EndWriter(
            engine,
            retention_runs=settings.retention_runs,
            whole_passing=settings.retention_whole_passing,
            metrics=metrics or Metrics(),
            on_end=lambda session, run: webhooks.enqueue_deliveries(session, run, settings.public_url),
        ),
        reach=Reach(
            allowed_networks=settings.allowed_networks,
            listen_host=settings.listen_address,
            listen_ports=settings.listen_ports,
        ),
        lease_seconds=settings.lease_seconds,
        requeue=defer_run,
        tap_flush_seconds=settings.tap_flush_seconds,
        tap_judging=settings.tap_judging,
    )


def build_app(settings: Settings, engine: Engine, executor: Executor | None, pool_size: int = 4) -> procrastinate.App:
    """The procrastinate app of one process; `executor` is None where runs are only deferred."""
    connector = procrastinate.PsycopgConnector(
        conninfo=conninfo(settings.database_url), min_size=1, max_size=max(2, pool_size)
    )
    app = procrastinate.App(connector=connector)

    @app.task(name=EXECUTE_RUN, pass_context=True)  # no retry: a lost run comes back through its lease
    async def execute_run(context: JobContext, run_id: int) -> None:
        if executor is None:
            raise RuntimeError("this process only defers runs")
        attempt = await asyncio.to_thread(leases.claim, engine, run_id, executor.worker, settings.lease_seconds)
        if attempt is None:  # cancelled or ended meanwhile, or an attempt already holds it
            return

        def ending() -> Ending:
            asked = context.abort_reason() == AbortReason.USER_REQUEST
            return Ending.CANCELLED if asked else Ending.HANDED_BACK

        await executor.execute(run_id, attempt, ending)

    @app.periodic(cron=settings.schedule_tick_cron, periodic_id="schedules")
    @app.task(name="dispatch_schedules", queue=OPS_QUEUE)
    async def dispatch_schedules(timestamp: int) -> None:
        tick = datetime.fromtimestamp(timestamp, UTC)  # the tick procrastinate deferred, not the clock
        await asyncio.to_thread(scheduler.fire_due, engine, tick, defer_run)

    @app.periodic(cron=settings.ops_tick_cron, periodic_id="leases")
    @app.task(name="recover_leases", queue=OPS_QUEUE)
    async def recover_leases(timestamp: int) -> None:
        await asyncio.to_thread(leases.recover_expired, engine, settings.max_attempts, defer_run)

    @app.periodic(cron=settings.ops_tick_cron, periodic_id="webhooks")
    @app.task(name="deliver_webhooks", queue=OPS_QUEUE)
    async def deliver_webhooks(timestamp: int) -> None:
        await webhooks.deliver_due(
            engine, settings.allowed_networks, settings.webhook_attempts, settings.webhook_backoff
        )

    @app.periodic(cron=settings.retention_tick_cron, periodic_id="retention")
    @app.task(name="apply_retention", queue=OPS_QUEUE)
    async def apply_retention(timestamp: int) -> None:
        await asyncio.to_thread(retention.sweep, engine, settings.retention_runs, settings.retention_whole_passing)

    return app


# ---------------------------------------------------------------- our worker registry


def register(engine: Engine, name: str, labels: Sequence[str], concurrency: int) -> None:
    with Session(engine) as session:
        row = session.get(Worker, name) or Worker(name=name, host=socket.gethostname()[:255])
        row.labels, row.concurrency, row.heartbeat = list(labels), concurrency, utcnow()
        session.add(row)
        session.commit()


def beat(engine: Engine, name: str, forget_after: float) -> None:
    """Heartbeat, and forget workers silent for `forget_after` seconds (their runs come back by lease)."""
    with Session(engine) as session:
        row = session.get(Worker, name)
        if row is not None:
            row.heartbeat = utcnow()
            session.add(row)
        session.exec(delete(Worker).where(col(Worker.heartbeat) < utcnow() - timedelta(seconds=forget_after)))
        session.commit()


def unregister(engine: Engine, name: str) -> None:
    with Session(engine) as session:
        session.exec(delete(Worker).where(col(Worker.name) == name))
        session.commit()


def live_workers(session: Session, heartbeat: float) -> list[Worker]:
    since = utcnow() - timedelta(seconds=3 * heartbeat)
    return list(session.exec(select(Worker).where(col(Worker.heartbeat) >= since).order_by(col(Worker.name))))


def current_runs(session: Session) -> dict[str, list[int]]:
    """Running run ids by the worker holding them."""
    rows = session.exec(select(Run.worker, Run.id).where(Run.status == RunStatus.RUNNING)).all()
    held: dict[str, list[int]] = {}
    for worker, run_id in rows:
        if worker and run_id is not None:
            held.setdefault(worker, []).append(run_id)
    return held


async def _heartbeats(engine: Engine, name: str, labels: Sequence[str], concurrency: int, every: float) -> None:
    await asyncio.to_thread(register, engine, name, labels, concurrency)
    while True:
        await asyncio.sleep(every)
        try:
            await asyncio.to_thread(beat, engine, name, 30 * every)
        except Exception:
            log.exception("worker heartbeat failed")


def worker_options(settings: Settings, **extra: Any) -> dict[str, Any]:
    return {
        "fetch_job_polling_interval": settings.poll_interval,
        "abort_job_polling_interval": min(1.0, settings.poll_interval),  # a cancel lands within a second
        "shutdown_graceful_timeout": settings.shutdown_grace,
        "delete_jobs": "successful",  # keeps procrastinate's fetch fast; our runs table is the history
        **extra,
    }


async def run_worker(settings: Settings, engine: Engine, labels: Sequence[str], concurrency: int) -> None:
    """`rlconform worker`: execute the runs of `labels` until SIGTERM/SIGINT, then drain."""
    name = worker_name(labels)
    executor = make_executor(settings, engine, name)
    app = build_app(settings, engine, executor, pool_size=min(concurrency + 2, 10))
    beats = asyncio.create_task(_heartbeats(engine, name, labels, concurrency, settings.worker_heartbeat))
    try:
        async with app.open_async():
            await app.run_worker_async(
                **worker_options(settings, queues=list(labels), name=name, concurrency=concurrency)
            )
    finally:
        beats.cancel()
        await asyncio.gather(beats, return_exceptions=True)
        await executor.writer.stop()
        await asyncio.to_thread(unregister, engine, name)


# ---------------------------------------------------------------- the service's side


class WorkerBackend(RunBackend):
    """What the service uses instead of the embedded runner when workers execute runs.

    It consumes the operations queue, and the `service_labels` runs itself
    (same tasks, same executor) so a single `rlconform serve` on PostgreSQL
    works alone; `wake()` is a no-op since the job was deferred with the run.
    """

    def __init__(self, settings: Settings, engine: Engine, metrics: Metrics) -> None:
        self.settings, self.engine, self.metrics = settings, engine, metrics
        self.labels = list(settings.service_labels)
        self.name = worker_name(self.labels, "service")
        self.executor = make_executor(settings, engine, self.name, metrics)
        pool = min(settings.max_concurrent_runs + 3, 10)
        self.app = build_app(settings, engine, self.executor, pool_size=pool)
        self._tasks: list[asyncio.Task[Any]] = []
        self._workers: list[tuple[procrastinate.worker.Worker, asyncio.Task[None]]] = []

    def allow_own(self, url: str) -> None:
        self.executor.allow_own(url)

    async def start(self) -> None:
        await self.app.open_async()
        await asyncio.to_thread(leases.recover_expired, self.engine, self.settings.max_attempts, defer_run)
        options = worker_options(self.settings, install_signal_handlers=False)
        self._start_worker(options | {"queues": [OPS_QUEUE], "name": f"{self.name}:ops", "concurrency": 3})
        if self.labels:
            concurrency = self.settings.max_concurrent_runs
            self._start_worker(options | {"queues": self.labels, "name": self.name, "concurrency": concurrency})
            beats = _heartbeats(self.engine, self.name, self.labels, concurrency, self.settings.worker_heartbeat)
            self._tasks.append(asyncio.create_task(beats))

    def _start_worker(self, options: dict[str, Any]) -> None:
        self.app.perform_import_paths()
        worker = procrastinate.worker.Worker(app=self.app, **{**self.app.worker_defaults, **options})
        self._workers.append((worker, asyncio.create_task(worker.run())))

    async def stop(self) -> None:
        # Asked to stop, a procrastinate worker drains as on SIGTERM. Cancelling its task instead races
        # with its start-up (a cancel swallowed by the database driver left it waiting for good), and a
        # stop that comes before its run() has begun is forgotten, so the request is repeated until it ends.
        for task in self._tasks:
            task.cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.shutdown_grace + STOP_MARGIN
        running = dict(self._workers)
        while running and loop.time() < deadline:
            for worker in running:
                worker.stop()
            await asyncio.wait(running.values(), timeout=RESTOP_EVERY)
            running = {worker: task for worker, task in running.items() if not task.done()}
        for task in running.values():
            log.warning("a worker did not drain within its grace; cancelling it")
            task.cancel()
        await asyncio.gather(*self._tasks, *(task for _, task in self._workers), return_exceptions=True)
        await self.executor.writer.stop()
        if self.labels:
            await asyncio.to_thread(unregister, self.engine, self.name)
        await self.app.close_async()

    def wake(self) -> None:
        pass

    async def cancel(self, run_id: int) -> None:
        """Abort the run's job (a running run stops within a second); a run nobody executes is ended here."""
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status in ENDED_STATUSES:
                return
            job_id, running = run.job_id, run.status == RunStatus.RUNNING
        if job_id is not None:
            await self.app.job_manager.cancel_job_by_id_async(job_id, abort=running)
        if running:
            deadline = asyncio.get_running_loop().time() + CANCEL_WAIT
            while asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.05)
                if await asyncio.to_thread(_ended, self.engine, run_id):
                    return
        await asyncio.to_thread(cancel_in_db, self.engine, run_id, self.metrics)


def _ended(engine: Engine, run_id: int) -> bool:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        return run is None or run.status in ENDED_STATUSES
