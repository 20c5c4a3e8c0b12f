"""Background runs: queued in the database, executed by async workers under a concurrency limit.

`Runner` is the embedded backend: it claims queued runs (`app.leases`) and
executes each with the `app.executor.Executor`, which records what the run
decides as it is decided (`app.recording`). On start-up, runs left `running`
by a dead process become `interrupted` with their decided clauses intact,
and queued runs are picked up again. In workers mode `app.worker.WorkerBackend`
takes the runner's place.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import logging
import os
import socket
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypedDict

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app import crud, leases
from app.executor import INTERRUPTED_MESSAGE, Executor
from app.leases import Ending
from app.metrics import Metrics
from app.models import ENDED_STATUSES, Run, RunStatus, Target, utcnow
from app.netpolicy import Reach
from app.recording import EndWriter

if TYPE_CHECKING:
    from app.settings import Settings

log = logging.getLogger("rlconform.runner")

CANCEL_WAIT = 30.0  # seconds a cancel request waits for the run to record its end


def recover_interrupted(engine: Engine) -> int:
    """Mark runs left `running` by a dead process as interrupted; returns how many."""
    with Session(engine) as session:
        result = session.exec(
            update(Run)
            .where(col(Run.status) == RunStatus.RUNNING)
            .values(
                status=RunStatus.INTERRUPTED,
                finished_at=utcnow(),
                current_phase=None,
                lease_until=None,
                message=INTERRUPTED_MESSAGE,
            )
        )
        session.commit()
        return result.rowcount or 0


class RunBackend(abc.ABC):
    """What the service executes runs through: the embedded `Runner`, or `app.worker.WorkerBackend` (workers)."""

    @abc.abstractmethod
    def allow_own(self, url: str) -> None:
        """Let runs reach one of the service's own servers (a demo target) whatever the network policy says."""

    @abc.abstractmethod
    def wake(self) -> None:
        """A run was queued."""

    @abc.abstractmethod
    async def cancel(self, run_id: int) -> None:
        """Cancel a queued or running run; decided clauses are kept and the status becomes `cancelled`."""

    @abc.abstractmethod
    async def stop(self) -> None: ...

    async def delete_target(self, session: Session, target: Target) -> None:
        """Cancel the target's queued and running runs, then delete it with all its runs."""
        for run_id in await asyncio.to_thread(crud.live_run_ids, session, target):
            await self.cancel(run_id)
        await asyncio.to_thread(crud.delete_target, session, target)


class RunnerOptions(TypedDict):
    max_concurrent: int
    allowed_networks: Sequence[str]
    listen_host: str
    listen_ports: Sequence[int]
    retention_runs: int
    whole_passing: int


def runner_options(settings: Settings) -> RunnerOptions:
    """What the settings decide of a Runner, alike for runs in the web process and in run processes."""
    return {
        "max_concurrent": settings.max_concurrent_runs,
        "allowed_networks": settings.allowed_networks,
        "listen_host": settings.listen_address,
        "listen_ports": settings.listen_ports,
        "retention_runs": settings.retention_runs,
        "whole_passing": settings.retention_whole_passing,
    }


class Runner(RunBackend):
    """Claims queued runs and executes up to `max_concurrent` of them at once, inside this process."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_concurrent: int = 4,
        allowed_networks: Sequence[str] = (),
        listen_host: str = "127.0.0.1",
        listen_ports: Sequence[int] = (0,),
        retention_runs: int = 500,
        whole_passing: int = 20,
        metrics: Metrics | None = None,
        poll_interval: float = 2.0,
        on_end: Callable[[Session, Run], object] | None = None,
    ) -> None:
        self.engine = engine
        self.max_concurrent = max_concurrent
        self.metrics = metrics or Metrics()
        self.poll_interval = poll_interval
        self.executor = Executor(
            engine,
            worker=f"{socket.gethostname()}:{os.getpid()}:embedded",
            ends=EndWriter(
                engine, retention_runs=retention_runs, whole_passing=whole_passing, metrics=self.metrics, on_end=on_end
            ),
            reach=Reach(allowed_networks=allowed_networks, listen_host=listen_host, listen_ports=listen_ports),
            # Nothing else executes these runs: the lease only fences writes; start-up interrupts leftovers.
            lease_seconds=3600.0,
        )
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._stopping = False

    # -- lifecycle

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._dispatcher = asyncio.create_task(self._dispatch_loop(), name="runner-dispatcher")

    async def stop(self) -> None:
        """Stop claiming; runs still executing end as `interrupted` with their results kept."""
        self._stopping = True
        if self._dispatcher is not None:
            self._dispatcher.cancel()
            await asyncio.gather(self._dispatcher, return_exceptions=True)
        tasks = list(self.tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def allow_own(self, url: str) -> None:
        self.executor.allow_own(url)

    def wake(self) -> None:
        """Look for queued runs now. Safe to call from any thread (sync routes run in a pool)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        try:
            current = asyncio.get_running_loop()
        except RuntimeError:
            current = None
        if current is loop:
            self._wake.set()
        else:
            loop.call_soon_threadsafe(self._wake.set)

    async def cancel(self, run_id: int) -> None:
        """Cancel a queued or running run; decided clauses are kept and the status becomes `cancelled`."""
        task = self.tasks.get(run_id)
        if task is not None:
            task.cancel()
            await asyncio.wait({task}, timeout=CANCEL_WAIT)
            return
        await asyncio.to_thread(cancel_in_db, self.engine, run_id, self.metrics)

    # -- dispatching

    async def _dispatch_loop(self) -> None:
        while not self._stopping:
            self._wake.clear()
            free = self.max_concurrent - self.executing()
            if free > 0:
                try:
                    await self._claim_and_start(free)
                except Exception:  # a database hiccup must not kill the dispatcher
                    log.exception("claiming queued runs failed")
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=self.poll_interval)
            except TimeoutError:
                pass

    def executing(self) -> int:
        """Runs this backend executes now (what counts against `max_concurrent`)."""
        return len(self.tasks)

    async def _claim_and_start(self, free: int) -> None:
        claimed = await asyncio.to_thread(
            leases.claim_next, self.engine, self.executor.worker, self.executor.lease_seconds, free
        )
        for run_id, attempt in claimed:
            self._start_here(run_id, attempt)

    def _start_here(self, run_id: int, attempt: int) -> None:
        """Execute a run this process claimed as a task of its event loop."""
        task = asyncio.create_task(self._execute(run_id, attempt), name=f"run-{run_id}")
        self.tasks[run_id] = task
        task.add_done_callback(functools.partial(self._task_done, run_id))

    async def _execute(self, run_id: int, attempt: int) -> None:
        await self.executor.execute(run_id, attempt, self._ending)

    def _ending(self) -> Ending:
        return Ending.INTERRUPTED if self._stopping else Ending.CANCELLED

    def _task_done(self, run_id: int, _task: asyncio.Task[None]) -> None:
        self.tasks.pop(run_id, None)
        self._wake.set()


def cancel_in_db(engine: Engine, run_id: int, metrics: Metrics) -> bool:
    """Cancel a run nobody here executes; True when it was queued (it never ran)."""
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is None or run.status in ENDED_STATUSES:
            return False
        was_queued = run.status == RunStatus.QUEUED
        if crud.cancel_run(session, run).status == RunStatus.CANCELLED and was_queued:
            metrics.run_never_executed(RunStatus.CANCELLED)
        return was_queued
