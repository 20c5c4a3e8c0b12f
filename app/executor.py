"""Executing one claimed run, whoever claimed it: the embedded `app.runner.Runner` or a procrastinate worker.

The executor loads the run, checks where it may connect (`app.netpolicy.Reach`),
pins the checked address, runs the suite into a `RunRecorder` while a lease
renewer runs beside it (`app.leases.keep_renewed`), and records the run's end
(`EndWriter`) with the outcome, summary and counts its recorder rolls up from what it
wrote. Parity runs go to `app.parity_runs.execute_parity` instead.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import crud, leases, parity_runs, tap_runs
from app.db import is_disk_full
from app.deployments import read_identity
from app.leases import Ending
from app.listening import Announcing, listen_policy
from app.models import Run, RunStatus, Target, stored_id
from app.models_tap import TapTarget
from app.netpolicy import NetworkRefused, Reach
from app.recording import Decided, EndWriter, GroupWriter, RunRecorder, prepare_attempt
from app.redaction import scrub, secret_values, url_secrets
from checks.core import (
    ListenPolicy,
    Outcome,
    RolledUp,
    Suite,
    SuiteOptions,
    outcome_of,
    rolled_verdicts,
    root_causes,
    run_suite,
    truncate,
)
from checks.pinning import pinned
from checks.registry import find_suite

log = logging.getLogger("rlconform.runner")

FULL_MESSAGE = "interrupted: the database was full; the results committed before are kept"
FULL_RETRY_SECONDS = 1.0  # how often a run's end is tried again while the database is full
INTERRUPTED_MESSAGE = leases.UNLEASED_MESSAGE  # the same words whoever finds the run stopped with the service


@dataclass
class _Progress:
    """What an attempt has set up so far, for the handlers of how it stopped."""

    recorder: RunRecorder | None = None
    secrets: list[str] = field(default_factory=list)
    counts: dict[str, int] | None = None  # the run's, once its recorder committed all it decided


@dataclass
class Executor:
    """Executes one run: the suite against the target, every decision recorded as it is made.

    The run must already be claimed (`leases.claim`) by `attempt`. A lease
    renewer runs beside the suite; when it finds the attempt lost the run,
    the suite is stopped and nothing more is written. Phases an earlier
    attempt finished are kept; the first unfinished one starts again.
    """

    engine: Engine
    worker: str
    ends: EndWriter
    reach: Reach = field(default_factory=Reach)
    lease_seconds: float = 60.0
    requeue: leases.Requeue | None = None  # how a handed-back run goes back to the queue
    tap_flush_seconds: float = 2.0  # how often a hosted tap writes its counters (`app.tap_host`)
    tap_judging: str = "process"  # where a hosted tap judges: "process" (spawned) or "thread"
    _writer: GroupWriter | None = None

    @property
    def writer(self) -> GroupWriter:
        if self._writer is None:
            self._writer = GroupWriter(self.engine)
        return self._writer

    def allow_own(self, url: str) -> None:
        """Let runs reach `url`, a server this service runs itself (the demo), whatever the policy says."""
        self.reach.allow_own(url)

    async def execute(self, run_id: int, attempt: int, ending: Callable[[], Ending]) -> None:
        """Run the suite; `ending` says how to record a stop from outside (cancellation)."""
        lost = asyncio.Event()
        renewer = asyncio.create_task(
            leases.keep_renewed(self.engine, run_id, attempt, self.lease_seconds, lost, asyncio.current_task()),
            name=f"run-{run_id}-lease",
        )
        try:
            await self._execute(run_id, attempt, ending, lost)
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)

    async def _execute(self, run_id: int, attempt: int, ending: Callable[[], Ending], lost: asyncio.Event) -> None:
        progress = _Progress()
        end = functools.partial(self._finish, run_id, attempt, time.monotonic(), progress)
        try:
            await self._run(run_id, attempt, end, progress)
        except leases.LeaseLost:
            log.warning("run %s: attempt %d lost its lease; another attempt owns it", run_id, attempt)
        except asyncio.CancelledError:
            if progress.recorder is not None:
                await _close_quietly(progress.recorder)
            if not lost.is_set():
                await self._stopped(run_id, attempt, ending(), end)
                raise
        except NetworkRefused as exc:
            await end(RunStatus.FINISHED, Outcome.ERROR, f"refused by the network policy: {exc}")
        except Exception as exc:
            if is_disk_full(exc):  # what it decided could not be kept: not a finished run
                await end(RunStatus.INTERRUPTED, None, FULL_MESSAGE)
                return
            log.exception("run %s failed in the harness", run_id)
            if progress.recorder is not None:
                await _close_quietly(progress.recorder)
            why = scrub(f"harness error: {type(exc).__name__}: {truncate(str(exc), 300)}", progress.secrets)
            await end(RunStatus.FINISHED, Outcome.ERROR, why)

    async def _run(self, run_id: int, attempt: int, end: parity_runs.End, progress: _Progress) -> None:
        loaded = await asyncio.to_thread(self._load, run_id, attempt)
        if loaded is None:
            return
        run, target = loaded
        parity = await asyncio.to_thread(parity_runs.load_other_side, self.engine, run_id)
        if parity is not None:
            await parity_runs.execute_parity(self.engine, self.reach, run, target, attempt, parity, end)
            return
        tap = await asyncio.to_thread(self._tap_of, target)
        if tap is not None:
            from app.tap_host import HostedTap  # loads the tap's relay only where a tap runs

            keep = (self.ends.retention_runs, self.ends.whole_passing)
            hosted = HostedTap(self.engine, self.reach, self.worker, self.tap_flush_seconds, keep, self.tap_judging)
            await hosted.execute(run, target, tap, crud.run_url(run, target), attempt, end)
            return
        suite = find_suite(run.kind)
        if suite is None:
            await end(RunStatus.FINISHED, Outcome.ERROR, f"{run.kind} is unavailable")
            return
        await self._run_suite(suite, run, target, attempt, end, progress)

    def _load(self, run_id: int, attempt: int) -> tuple[Run, Target] | None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status != RunStatus.RUNNING or run.attempts != attempt:
                return None
            target = session.get(Target, run.target_id)
            if target is None:
                return None
            session.expunge_all()
            return run, target

    def _tap_of(self, target: Target) -> TapTarget | None:
        with Session(self.engine) as session:
            tap = tap_runs.target_tap(session, target)
            if tap is not None:
                session.expunge(tap)
            return tap

    async def _run_suite(
        self, suite: Suite, run: Run, target: Target, attempt: int, end: parity_runs.End, progress: _Progress
    ) -> None:
        run_id = stored_id(run)
        options = crud.run_options(suite, run, target)
        url = crud.run_url(run, target)
        progress.secrets = secret_values(suite.options_model, options) + url_secrets(url)
        host, address, listen = await self._where(suite, url, options)
        kept = await asyncio.to_thread(prepare_attempt, self.engine, run_id, attempt)
        recorder = progress.recorder = RunRecorder(self.writer, run_id, attempt, progress.secrets, kept)
        if listen is not None:
            deadline = float(getattr(options, "connect_deadline", 0.0))
            recorder.announcing = Announcing(attempt, self.worker, deadline, listen.host)
        with pinned(host, address):  # every phase connects to the address just checked
            await run_suite(
                suite, url, options, run.phases or None, recorder, finished=run.finished_phases, listen=listen
            )
            await read_identity(self.engine, run_id, run.kind, url, options)  # what the wire says it is
        await recorder.close()
        task = asyncio.current_task()
        if task is not None and task.cancelling():  # a phase swallowed the cancellation
            raise asyncio.CancelledError
        rolled, progress.counts = recorder.rolled()  # all of it committed: what the rows would say
        outcome = outcome_of(rolled_verdicts(rolled), run.gate, run.expected_failures)
        await end(RunStatus.FINISHED, outcome, _summary(rolled, run))

    async def _where(
        self, suite: Suite, url: str, options: SuiteOptions
    ) -> tuple[str, str | None, ListenPolicy | None]:
        """The host to pin and its checked address, or for a client kind where the run listens.

        A client kind's run listens here: the network policy applies to the client's source instead.
        """
        if suite.listen:
            reach = self.reach
            return "", None, listen_policy(reach.listen_host, reach.listen_ports, reach.allowed_networks, options)
        host, port = suite.host_port(url)
        return host, await self.reach.checked_address(host, port), None

    async def _stopped(self, run_id: int, attempt: int, how: Ending, end: parity_runs.End) -> None:
        """Record a run stopped from outside while this attempt still holds it."""
        if how is Ending.HANDED_BACK:
            await asyncio.to_thread(leases.hand_back, self.engine, run_id, attempt, self.requeue)
        elif how is Ending.INTERRUPTED:
            await end(RunStatus.INTERRUPTED, None, INTERRUPTED_MESSAGE)
        else:
            await end(RunStatus.CANCELLED, None, "cancelled; decided clauses are kept")

    async def _finish(
        self,
        run_id: int,
        attempt: int,
        started: float,
        progress: _Progress,
        status: RunStatus,
        outcome: Outcome | None,
        message: str,
    ) -> None:
        """Record the run's end. On a full disk the run ends `interrupted`, written as soon as there is space."""
        elapsed = time.monotonic() - started
        while True:
            try:
                write = functools.partial(self.ends.write, counts=progress.counts)
                await asyncio.to_thread(write, run_id, attempt, status, outcome, message, elapsed)
                return
            except Exception as exc:
                task = asyncio.current_task()
                if not is_disk_full(exc) or (task is not None and task.cancelling()):
                    raise  # stopping: the next start-up marks the run interrupted
                if status is not RunStatus.INTERRUPTED:
                    log.warning("run %s: the database is full; it ends `interrupted` once there is space", run_id)
                status, outcome, message = RunStatus.INTERRUPTED, None, FULL_MESSAGE
            await asyncio.sleep(FULL_RETRY_SECONDS)


def _summary(rolled: Sequence[RolledUp[Decided]], run: Run) -> str:
    """The clauses not met (in run order), then how many could not be decided and the biggest cause."""
    expected = set(run.expected_failures)
    failing = [e.clause_id for e in rolled if e.verdict in run.gate.failing() and e.clause_id not in expected]
    parts = []
    if failing:
        shown = ", ".join(failing[:10]) + (f" and {len(failing) - 10} more" if len(failing) > 10 else "")
        parts.append(f"not met: {shown}")
    unexpected = [e for e in rolled if e.clause_id not in expected]
    causes = root_causes(unexpected, lambda r: (r.phase, r.actual))
    if causes:
        undecided = sum(len(c.clause_ids) for c in causes)
        parts.append(f"{undecided} not decided, mostly: {truncate(causes[0].reason, 200)}")
    return "; ".join(parts)


async def _close_quietly(recorder: RunRecorder) -> None:
    try:
        await recorder.close()
    except Exception:
        log.exception("writing the last results of run %s failed", recorder.run_id)
