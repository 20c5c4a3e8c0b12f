"""`POST /runs/{run_id}/reference-client`: start the kind's reference client against a listening run.

One click shows client grading end to end: the service starts
`rlconform reference-client KIND URL` (the same command the page offers to
copy) as a child process aimed at the address the run announced, and records
on the run that it did. One client per run, and it ends with its run: once
the run has ended (or is gone) the client is terminated, and killed when it
has not exited `STOP_GRACE` seconds later. A reference client retries and
restarts sessions as a person would, so one left running would connect to
the next run listening on that port and be graded as that run's client.
A client is also killed when it outlives `CLIENT_LIFETIME` or the service stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys

from fastapi import Request
from fastapi.responses import RedirectResponse
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.deps import RunDep
from app.listening import announcement_view
from app.models import ENDED_STATUSES, Run, utcnow
from app.web.guard import WriteGuard
from app.web.pages import page_router
from checks.registry import find_suite

log = logging.getLogger("rlconform.web")
router = page_router()
# Longer than any client-kind run's connect deadline and phases; a client still alive after it is stuck.
CLIENT_LIFETIME = 900.0
# How often a client's run is looked up, and how long a terminated client has to exit before it is killed.
RUN_POLL = 0.2
STOP_GRACE = 3.0


class ReferenceClients:
    """The reference clients this service started, by run id, each watched until it or its run ends."""

    def __init__(self, engine: Engine | None = None) -> None:
        self.engine = engine
        self.running: dict[int, asyncio.subprocess.Process] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

    def started_for(self, run_id: int) -> bool:
        process = self.running.get(run_id)
        return process is not None and process.returncode is None

    def run_ended(self, run_id: int) -> None:
        """The run has ended (the runner's end hook, from any thread): its client is terminated at once."""
        loop = self._loop
        if run_id in self.running and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._terminate, run_id)

    def _terminate(self, run_id: int) -> None:
        process = self.running.get(run_id)
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()  # the watcher kills it if it has not exited within STOP_GRACE

    async def start(self, run_id: int, kind: str, url: str) -> None:
        self._loop = asyncio.get_running_loop()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app.cli",
            "reference-client",
            kind,
            url,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        self.running[run_id] = process
        watcher = asyncio.create_task(self._watch(run_id, process))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)

    async def _watch(self, run_id: int, process: asyncio.subprocess.Process) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLIENT_LIFETIME
        try:
            while process.returncode is None:
                if loop.time() > deadline:
                    log.warning("the reference client of run %s ran %d s; stopping it", run_id, CLIENT_LIFETIME)
                    break
                if await self._run_over(run_id):
                    break
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(process.wait(), RUN_POLL)
            await self._stop(process)
        except asyncio.CancelledError:  # the service is stopping
            await self._stop(process)
            raise
        finally:
            if self.running.get(run_id) is process:
                del self.running[run_id]

    async def _run_over(self, run_id: int) -> bool:
        """Whether the run has ended or was deleted (a client started without an engine is not looked up)."""
        if self.engine is None:
            return False
        return await asyncio.to_thread(run_over, self.engine, run_id)

    @staticmethod
    async def _stop(process: asyncio.subprocess.Process) -> None:
        """Terminate the client; kill it if it has not exited within STOP_GRACE seconds."""
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), STOP_GRACE)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()

    async def close(self) -> None:
        for watcher in list(self._watchers):
            watcher.cancel()
        for watcher in list(self._watchers):
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await watcher


def run_over(engine: Engine, run_id: int) -> bool:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        return run is None or run.status in ENDED_STATUSES


def mark_client_started(engine: Engine, run_id: int) -> None:
    with Session(engine) as session:
        run = session.get(Run, run_id)
        if run is not None:
            run.client_started_at = utcnow()
            session.add(run)
            session.commit()


def reference_clients(request: Request) -> ReferenceClients:
    clients: ReferenceClients | None = getattr(request.app.state, "reference_clients", None)
    if clients is None:
        clients = request.app.state.reference_clients = ReferenceClients(request.app.state.engine)
    return clients


@router.post("/runs/{run_id}/reference-client", include_in_schema=False, dependencies=[WriteGuard])
async def start_reference_client(request: Request, run: RunDep) -> RedirectResponse:
    """Start the reference client at the address the run listens on; a run not listening is left alone."""
    announcement = announcement_view(run)
    suite = find_suite(run.kind)
    clients = reference_clients(request)
    run_id = run.id or 0
    if announcement and announcement["waiting"] and suite and suite.reference_client:
        if not clients.started_for(run_id):
            await clients.start(run_id, suite.reference_client, announcement["url"])
            await asyncio.to_thread(mark_client_started, request.app.state.engine, run_id)
    return RedirectResponse(f"/runs/{run_id}", status_code=303)
