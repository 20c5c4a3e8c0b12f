"""Embedded mode on more than one core: the web process claims runs and run processes execute them.

`ProcessRunner` is the embedded `Runner` with `RLCONFORM_RUN_PROCESSES` run processes
(`app.run_process`) beside it. Its dispatcher claims each queued run as before, oldest first
and up to `RLCONFORM_MAX_CONCURRENT_RUNS` in all, in the name of the run process with the
fewest runs (`host:pid:run-process`, kept on the run and its attempt), with a lease of
`RLCONFORM_LEASE_SECONDS` that process renews. Only this dispatcher claims, so no run is
executed twice; a lease's fencing keeps a stalled process from writing once its run was taken.

A run whose kind a fresh process does not know (one registered by code in the web process
only, as the tests' `fake` kind) is executed in the web process, as with 0 run processes.

A run process that exits unasked is started again; the runs it held are re-queued at once
through their lease (`leases.recover_expired`), and after `RLCONFORM_MAX_ATTEMPTS` attempts a
run ends `interrupted` saying so. Expired leases are also looked for every lease period: a
process that hangs loses its runs that way, and is killed and started again. The processes
stop with the service: asked to stop, their runs end `interrupted` as the web process's own
do; each also stops when its stdin closes, so a web process killed with SIGKILL leaves none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import leases
from app.metrics import Metrics
from app.models import ENDED_STATUSES, Run, RunStatus, utcnow
from app.run_process import process_config
from app.runner import CANCEL_WAIT, Runner, cancel_in_db, runner_options
from app.settings import Settings

log = logging.getLogger("rlconform.runner")

STOP_WAIT = CANCEL_WAIT + 5.0  # seconds a run process gets to end its runs when the service stops
RESTART_FIRST, RESTART_MAX = 0.5, 30.0  # seconds before a run process that exited is started again
STEADY = 60.0  # a process that ran this long before exiting is restarted after RESTART_FIRST again
# Started by `-c`, not `-m app.run_process`: a process it spawns (a tap's judges) then imports no main module,
# where `-m` would have it import the whole executor again before it starts judging.
ENTRY = "import sys; from app.run_process import main; sys.exit(main())"
FAILED_STARTS = 3  # processes in a row that exit before ready: runs are executed in the web process instead


@dataclass
class RunProcessSlot:
    """One run process, started again whenever it exits unasked."""

    index: int
    process: asyncio.subprocess.Process | None = None
    name: str = ""
    ready: bool = False  # it said so, and may be handed runs
    started: bool = False  # it said it was ready, since it was last started
    runs: set[int] = field(default_factory=set)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # a run of it is done
    started_at: datetime | None = None  # when its current process was started

    def send(self, **message: Any) -> None:
        stdin = self.process.stdin if self.process is not None else None
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):  # it exited: its monitor sees to its runs
            stdin.write((json.dumps(message) + "\n").encode())


class ProcessRunner(Runner):
    """The embedded runner with run processes: see the module's docstring."""

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        *,
        metrics: Metrics | None = None,
        on_end: Callable[[Session, Run], object] | None = None,
        on_done: Callable[[int], object] | None = None,
        log_level: str = "info",
    ) -> None:
        super().__init__(engine, **runner_options(settings), metrics=metrics, on_end=on_end)
        self.settings, self.on_done, self.log_level = settings, on_done, log_level
        self.slots = [RunProcessSlot(index) for index in range(settings.run_processes)]
        self.process_kinds: frozenset[str] | None = None  # what a fresh process knows, once one said
        self._own: list[str] = []
        self._failed_starts = 0
        self._monitors: list[asyncio.Task[None]] = []

    # -- lifecycle

    def start(self) -> None:
        super().start()
        self._monitors = [
            asyncio.create_task(self._keep(slot), name=f"run-process-{slot.index}") for slot in self.slots
        ]
        self._monitors.append(asyncio.create_task(self._recover_leases(), name="run-process-leases"))

    async def stop(self) -> None:
        await super().stop()  # no more claims; the web process's own runs end `interrupted`
        for slot in self.slots:
            slot.send(stop=True)
            if slot.process is not None and slot.process.stdin is not None:
                slot.process.stdin.close()
        processes = [slot.process for slot in self.slots if slot.process is not None]
        waits = [asyncio.create_task(process.wait()) for process in processes]
        if waits:
            await asyncio.wait(waits, timeout=STOP_WAIT)
        for process in processes:
            if process.returncode is None:
                log.warning("run process %s did not stop within %.0f s; killing it", process.pid, STOP_WAIT)
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
        await asyncio.gather(*waits, return_exceptions=True)
        for task in self._monitors:
            task.cancel()
        await asyncio.gather(*self._monitors, return_exceptions=True)

    def allow_own(self, url: str) -> None:
        super().allow_own(url)
        self._own.append(url)
        for slot in self.slots:
            slot.send(allow=url)

    # -- the processes

    async def _keep(self, slot: RunProcessSlot) -> None:
        """Run the slot's process, and start it again whenever it exits unasked."""
        loop = asyncio.get_running_loop()
        pause = RESTART_FIRST
        while not self._stopping:
            began = loop.time()
            try:
                code = await self._run_process(slot)
            except Exception:
                log.exception("run process %d failed", slot.index)
                code = None
            was_ready, slot.ready, slot.started = slot.started, False, False
            if self._stopping:
                return
            log.warning("run process %s exited (status %s); its runs go back to the queue", slot.name, code)
            self._failed_starts = 0 if was_ready else self._failed_starts + 1
            if self._failed_starts >= FAILED_STARTS:
                log.error("run processes exit before they start; runs are executed in the web process")
            await asyncio.to_thread(release_runs, self.engine, slot.name, self.settings.max_attempts)
            slot.runs.clear()
            slot.changed.set()
            self._wake.set()
            pause = RESTART_FIRST if loop.time() - began > STEADY else min(pause * 2, RESTART_MAX)
            await asyncio.sleep(pause)

    async def _run_process(self, slot: RunProcessSlot) -> int | None:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            ENTRY,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,  # Ctrl-C in a terminal reaches the web process only, which stops it
            limit=1 << 20,
        )
        slot.process, slot.name = process, f"{socket.gethostname()}:{process.pid}:run-process"
        slot.started_at = utcnow()
        slot.send(**process_config(self.settings, slot.name, list(self._own), self.log_level))
        assert process.stdout is not None
        try:
            while line := await process.stdout.readline():
                self._heard(slot, json.loads(line))
            return await process.wait()
        finally:  # cancelled (the service stops) or failed: the process does not outlive its slot's monitor
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()

    def _heard(self, slot: RunProcessSlot, message: dict[str, Any]) -> None:
        if "ready" in message:
            self.process_kinds = frozenset(message["ready"])
            slot.ready = slot.started = True
            self._failed_starts = 0
            log.info("run process %s ready", slot.name)
            self._wake.set()
        elif "done" in message:
            run_id = int(message["done"])
            slot.runs.discard(run_id)
            slot.changed.set()
            if self.on_done is not None:
                self.on_done(run_id)
            self._wake.set()
        elif "ended" in message:
            status, outcome, seconds, verdicts = message["ended"]
            self.metrics.run_ended(status, outcome, float(seconds), Counter(verdicts))

    async def _recover_leases(self) -> None:
        """Every lease period: a process holding a run whose lease expired is hung (it renews every third of
        a lease), so it is killed and started again, its runs re-queued; other expired runs are re-queued."""
        while True:
            await asyncio.sleep(self.settings.lease_seconds)
            try:
                hung = await asyncio.to_thread(_expired_holders, self.engine)
                for slot in self.slots:
                    if slot.name in hung and slot.process is not None and slot.process.returncode is None:
                        log.warning("run process %s stopped renewing its leases; killing it", slot.name)
                        slot.ready = False  # nothing more for it: its monitor re-queues its runs and restarts it
                        with contextlib.suppress(ProcessLookupError):
                            slot.process.kill()
                if await asyncio.to_thread(leases.recover_expired, self.engine, self.settings.max_attempts, None):
                    self._wake.set()
            except Exception:
                log.exception("looking for expired leases failed")

    def processes(self) -> list[RunProcessSlot]:
        """The run processes alive now (the workers page lists them): one per slot whose process runs."""
        return [slot for slot in self.slots if slot.process is not None and slot.process.returncode is None]

    # -- dispatching

    def executing(self) -> int:
        return len(self.tasks) + sum(len(slot.runs) for slot in self.slots)

    def _in_web_process(self, kind: str) -> bool:
        if self._failed_starts >= FAILED_STARTS:
            return True
        return self.process_kinds is not None and kind not in self.process_kinds

    async def _claim_and_start(self, free: int) -> None:
        queued = await asyncio.to_thread(_queued, self.engine, free)
        for run_id, kind in queued:
            if self._in_web_process(kind):
                attempt = await asyncio.to_thread(
                    leases.claim, self.engine, run_id, self.executor.worker, self.executor.lease_seconds
                )
                if attempt is not None:
                    self._start_here(run_id, attempt)
                continue
            ready = [slot for slot in self.slots if slot.ready]
            if not ready:
                return  # a process is starting: it says when it is ready
            slot = min(ready, key=lambda slot: len(slot.runs))
            if slot.runs and len(ready) < len(self.slots):
                return  # a process still starting takes the next run: it says when it is ready
            attempt = await asyncio.to_thread(leases.claim, self.engine, run_id, slot.name, self.settings.lease_seconds)
            if attempt is not None:
                slot.runs.add(run_id)
                slot.send(run=run_id, attempt=attempt)

    async def cancel(self, run_id: int) -> None:
        slot = next((slot for slot in self.slots if run_id in slot.runs), None)
        if slot is None:
            await super().cancel(run_id)
            return
        slot.send(cancel=run_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CANCEL_WAIT
        while run_id in slot.runs and loop.time() < deadline:
            slot.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(slot.changed.wait(), timeout=0.5)
        if not await asyncio.to_thread(_ended, self.engine, run_id):
            await asyncio.to_thread(cancel_in_db, self.engine, run_id, self.metrics)


def _queued(engine: Engine, limit: int) -> list[tuple[int, str]]:
    """The oldest `limit` queued runs and their kinds."""
    with Session(engine) as session:
        rows = session.exec(
            select(Run.id, Run.kind).where(Run.status == RunStatus.QUEUED).order_by(col(Run.id)).limit(limit)
        ).all()
    return [(run_id, kind) for run_id, kind in rows if run_id is not None]


def _expired_holders(engine: Engine) -> set[str]:
    """Who holds a running run whose lease has expired."""
    with Session(engine) as session:
        rows = session.exec(
            select(Run.worker).where(
                Run.status == RunStatus.RUNNING, col(Run.lease_until).is_not(None), col(Run.lease_until) < utcnow()
            )
        ).all()
    return {worker for worker in rows if worker}


def _ended(engine: Engine, run_id: int) -> bool:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        return run is None or run.status in ENDED_STATUSES


def release_runs(engine: Engine, worker: str, max_attempts: int) -> int:
    """The runs `worker` held, its process gone: their leases end now and recovery re-queues them."""
    if not worker:
        return 0
    with Session(engine) as session:
        session.exec(
            update(Run)
            .where(col(Run.status) == RunStatus.RUNNING, col(Run.worker) == worker[:200])
            .values(lease_until=utcnow() - timedelta(seconds=1))
        )
        session.commit()
    return leases.recover_expired(engine, max_attempts, None)
