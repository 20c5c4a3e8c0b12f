"""`POST /runs/{run_id}/reference-client`: start the kind's reference client against a listening run.

One click shows client grading end to end: the service starts
`rlconform reference-client KIND URL` (the same command the page offers to
copy) as a child process aimed at the address the run announced. One client
per run; each is killed when it outlives `CLIENT_LIFETIME` or the service
stops, so a stuck client never outlives what it was started for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys

from fastapi import Request
from fastapi.responses import RedirectResponse

from app.deps import RunDep
from app.listening import announcement_view
from app.web.guard import WriteGuard
from app.web.pages import page_router
from checks.registry import find_suite

log = logging.getLogger("rlconform.web")
router = page_router()
# Longer than any client-kind run's connect deadline and phases; a client still alive after it is stuck.
CLIENT_LIFETIME = 900.0


class ReferenceClients:
    """The reference clients this service started, by run id, each watched until it ends."""

    def __init__(self) -> None:
        self.running: dict[int, asyncio.subprocess.Process] = {}
        self._watchers: set[asyncio.Task[None]] = set()

    def started_for(self, run_id: int) -> bool:
        process = self.running.get(run_id)
        return process is not None and process.returncode is None

    async def start(self, run_id: int, kind: str, url: str) -> None:
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
        try:
            await asyncio.wait_for(process.wait(), CLIENT_LIFETIME)
        except TimeoutError:
            log.warning("the reference client of run %s ran %d s; stopping it", run_id, CLIENT_LIFETIME)
            await self._kill(process)
        except asyncio.CancelledError:  # the service is stopping
            await self._kill(process)
            raise
        finally:
            if self.running.get(run_id) is process:
                del self.running[run_id]

    @staticmethod
    async def _kill(process: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()

    async def close(self) -> None:
        for watcher in list(self._watchers):
            watcher.cancel()
        for watcher in list(self._watchers):
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await watcher


def reference_clients(request: Request) -> ReferenceClients:
    clients: ReferenceClients | None = getattr(request.app.state, "reference_clients", None)
    if clients is None:
        clients = request.app.state.reference_clients = ReferenceClients()
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
    return RedirectResponse(f"/runs/{run_id}", status_code=303)
