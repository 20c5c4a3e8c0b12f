"""A tap the service hosts: the executor of a tap target's run listens, forwards and judges until stopped.

The run holds its lease like any run; it stays `running` while it watches. Every `flush_seconds` the
open window's counters are written (`app.tap_runs`); a window that rolled over becomes a finished run
of its own. Cancelling the run stops the tap: the open window's clauses are stored and the run ends
`finished` with that window's outcome. The judges run in a judging process of their own, spawned
(a fork of a process with threads and database connections could copy a lock another thread
holds), so they never share the GIL the relay needs; `RLCONFORM_TAP_JUDGING=thread` keeps them in a
thread of this process instead (bench/tap_service.py measures both beside a direct connection).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import Engine

from app import tap_runs
from app.listening import Announcing
from app.models import Run, RunStatus, Target, stored_id
from app.models_tap import TapTarget
from app.netpolicy import NetworkRefused, Reach
from checks.core import Outcome
from checks.listen import split_host_port
from checks.tap.ledger import Ledger, Rollover
from checks.tap.run import TapRun, upstream_address

End = Callable[[RunStatus, Outcome | None, str], Awaitable[None]]
STOP_DRAIN_SECONDS = 2.0  # judging what is still queued when the tap stops, well within a cancel's wait


@dataclass
class HostedTap:
    engine: Engine
    reach: Reach
    worker: str
    flush_seconds: float
    keep: tap_runs.Retention
    judging: str = "process"  # or "thread": RLCONFORM_TAP_JUDGING
    _last: tuple[float, int] = field(default=(0.0, 0))  # (when, messages) at the last flush: messages per second
    _handled: Ledger | None = None  # the last closed window stored (the tap keeps only its last 100)

    async def execute(self, run: Run, target: Target, tap: TapTarget, url: str, attempt: int, end: End) -> None:
        run_id = stored_id(run)
        spec = tap_runs.spec_for(target.kind, tap)
        tapped = TapRun(
            spec,
            await self._pinned_upstream(url),
            rollover=Rollover(tap.roll_seconds, tap.roll_messages),
            # Spawned, not forked: this process runs threads and holds database connections.
            judging="thread" if self.judging == "thread" else "spawn",
            admit=self._admit,
        )
        host, bound = await self._bind(tapped, tap.listen)
        listen_url = f"{_scheme(url)}://{_bracketed(host)}:{bound}"
        shown = Announcing(attempt, self.worker, 0.0, host).stored(
            listen_url, f"tap: clients connect to {listen_url}; it forwards to {run.url}"
        )
        try:
            opened = await asyncio.to_thread(tap_runs.open_hosted, self.engine, run_id, attempt, shown["url"], shown)
        except BaseException:  # cancelled (a stop at once) or the database failed: the tap must not outlive the run
            await tapped.stop(0.5)
            raise
        if not opened:
            await tapped.stop(0.5)
            return
        try:
            await self._watch(tapped, run_id, attempt)
        except asyncio.CancelledError:
            *closed, ledger = await tapped.stop(STOP_DRAIN_SECONDS)
            stored = await self._roll(closed, run_id, attempt)  # windows that closed since the last flush
            if stored and await self._flush(tapped, ledger, run_id, attempt, final=True):
                await end(RunStatus.FINISHED, ledger.outcome(run.gate), f"tap stopped; {_brief(ledger)}")
            raise
        await tapped.stop(STOP_DRAIN_SECONDS)  # this attempt lost the run: stop listening, write nothing more

    async def _watch(self, tapped: TapRun, run_id: int, attempt: int) -> None:
        """Write the counters every `flush_seconds` and store each window that rolled over, until cancelled."""
        self._last = (time.monotonic(), 0)
        while True:
            await asyncio.sleep(self.flush_seconds)
            live = tapped.live()  # first: a judging process's closed windows arrive with it
            if not await self._roll(_closed(tapped), run_id, attempt):
                return
            if not await self._flush(tapped, live, run_id, attempt, final=False):
                return

    async def _roll(self, closed: list[Ledger], run_id: int, attempt: int) -> bool:
        """Store the windows in `closed` not stored yet, each as a finished run; False once the run is lost."""
        handled = self._handled
        start = next((i + 1 for i, ledger in enumerate(closed) if ledger is handled), 0) if handled else 0
        for ledger in closed[start:]:
            rate = ledger.messages / max(ledger.elapsed(), 1e-6)
            kept = await asyncio.to_thread(
                tap_runs.roll_hosted, self.engine, run_id, attempt, ledger.to_dict(), rate, self.keep
            )
            if not kept:
                return False
            self._handled = ledger
        return True

    async def _flush(self, tapped: TapRun, ledger: Ledger, run_id: int, attempt: int, *, final: bool) -> bool:
        now, messages = time.monotonic(), tapped.messages()
        then, before = self._last
        rate = (messages - before) / max(now - then, 1e-6)
        self._last = (now, messages)
        document = ledger.to_dict()
        if not final:  # the judging thread counts these into a window only when it closes: the relay's so far
            stats, earlier = tapped.relay.stats, _closed(tapped)
            document["connections"] = max(document["connections"], stats.connections)
            document["unjudged_messages"] = max(0, stats.unjudged - sum(window.unjudged for window in earlier))
        document |= tapped.relay.stats.forward_latency()
        return await asyncio.to_thread(tap_runs.flush_hosted, self.engine, run_id, attempt, document, rate, final)

    def _admit(self, source: str) -> bool:
        from app.netpolicy import source_allowed

        return source_allowed(source, self.reach.allowed_networks)

    async def _pinned_upstream(self, url: str) -> str:
        """The upstream URL with its host replaced by the address the network policy checked (no re-resolving)."""
        host, port = upstream_address(url)
        address = await self.reach.checked_address(host, port)
        if address is None:
            return url
        scheme = _scheme(url)
        return f"{scheme}://{_bracketed(address)}:{port}"

    async def _bind(self, tapped: TapRun, listen: str) -> tuple[str, int]:
        """Listen where the tap target says, within this worker's listen settings, or on their first free port."""
        host, ports = self.reach.listen_host, tuple(self.reach.listen_ports) or (0,)
        if listen:
            want_host, want_port = split_host_port(listen)
            if want_host != host or (ports != (0,) and want_port not in ports):
                raise NetworkRefused(
                    f"listen={listen} is outside this worker's listen settings "
                    "(RLCONFORM_LISTEN_HOST / RLCONFORM_LISTEN_PORTS)"
                )
            ports = (want_port,)
        last: OSError | None = None
        for port in ports:
            try:
                return host, await tapped.start(host, port)
            except OSError as exc:
                last = exc
        raise OSError(f"the tap cannot listen on {host} at any of {len(ports)} ports: {last}")


def _closed(tapped: TapRun) -> list[Ledger]:
    """The windows that closed so far, oldest first (a judging process reports them through its handle)."""
    return list(tapped.judging.closed if tapped.judging is not None else tapped.closed)


def _scheme(url: str) -> str:
    return url.partition("://")[0] or "ws"


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _brief(ledger: Ledger) -> str:
    violated = [tally.clause_id for tally in ledger.tallies.values() if tally.violated]
    text = f"{ledger.messages} messages, {ledger.unjudged} unjudged"
    return text + (f"; violated: {', '.join(violated[:10])}" if violated else "")
