"""One tap: the relay on the event loop, the judges in a process of their own (or a thread), verdicts kept in
ledgers rolled over by time or count.

`TapRun.start` binds and returns the URL to give the client; `stop` ends the relay, lets the
judges finish what is queued and closes the last window. By default the judges run in a forked
process (`judging_process`), so judging a 2.25 MiB frame never holds the GIL the relay needs; a
`CopyQueue` passed as `queue` keeps them in a thread of this process instead. A judge that raises is recorded as
`error` for the clauses it decides (`Watcher.judge` says which); nothing the judges do reaches
the connections.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
import time
from collections.abc import Callable
from typing import Literal
from urllib.parse import urlsplit

from checks.tap.copies import CopyQueue
from checks.tap.judging_process import Final, ProcessJudging, ProcessQueue
from checks.tap.ledger import Ledger, Rollover
from checks.tap.relay import Relay
from checks.tap.spec import SWITCH_INTERVAL, TapSpec, Watcher, shorten_switch_interval

MAX_WINDOWS = 100
# Re-exported: `app/` and `rlconform tap` take the tap's whole interface from this module.
__all__ = ["SWITCH_INTERVAL", "TapRun", "TapSpec", "Watcher", "shorten_switch_interval", "upstream_address"]
# Where the judges run: a forked process (a process of the tap's own, where forking copies no one else's
# locks), a spawned process (inside a service, with its threads and database connections), or a thread.
Judging = Literal["fork", "spawn", "thread"]


def judging_queue(judging: Judging) -> CopyQueue | ProcessQueue:
    """The lane copies take to the judges: a thread's queue, or a judging process started as `judging` says."""
    if judging == "thread" or (judging == "fork" and "fork" not in multiprocessing.get_all_start_methods()):
        return CopyQueue()
    return ProcessQueue(start=judging)


def upstream_address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"no host in the upstream URL {url!r}")
    default = 443 if parts.scheme in ("https", "wss") else 80
    return parts.hostname, parts.port or default


class TapRun:
    def __init__(
        self,
        spec: TapSpec,
        upstream: str,
        *,
        rollover: Rollover | None = None,
        judging: Judging = "fork",
        queue: CopyQueue | ProcessQueue | None = None,
        admit: Callable[[str], bool] = lambda source: True,
    ) -> None:
        """`judging` says where the judges run; `queue` (tests) gives the lane itself instead."""
        self.spec = spec
        self.watcher = spec.watcher()
        self.queue: CopyQueue | ProcessQueue = queue if queue is not None else judging_queue(judging)
        self.relay = Relay(upstream_address(upstream), self.watcher.readers, self.queue, admit)
        self.upstream = upstream
        self.rollover = rollover or Rollover()
        self.closed: list[Ledger] = []  # earlier windows, oldest first (at most MAX_WINDOWS)
        self.ledger = self._new_ledger()
        self._lock = threading.Lock()  # guards the ledger while the judging thread rolls it
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._judge_loop, name="tap-judges", daemon=True)
        self._counted = (0, 0)  # relay (messages, unjudged) already assigned to closed windows
        self.judging: ProcessJudging | None = None
        if isinstance(self.queue, ProcessQueue):
            self.judging = ProcessJudging(self._new_ledger, self.watcher, self.rollover, self.queue, spec.origin)

    def _new_ledger(self) -> Ledger:
        return Ledger(self.spec.catalogue, self.spec.active_only, self.spec.raised)

    async def start(self, host: str, port: int) -> int:
        bound = await self.relay.start(host, port)
        if self.judging is not None:
            self.judging.start()
            return bound
        self._thread.start()
        return bound

    def live(self) -> Ledger:
        """The open window as the judges last reported it."""
        if self.judging is None:
            return self.ledger
        self.judging.collect()
        return self.judging.live

    def messages(self) -> int:
        return self.relay.stats.messages

    async def stop(self, drain_seconds: float = 5.0) -> list[Ledger]:
        """Stop relaying, judge what is queued (up to `drain_seconds`), close the window; every window."""
        await self.relay.close()
        if self.judging is not None:
            stats = self.relay.stats
            final = Final(stats.messages, stats.unjudged, stats.connections)
            windows = await asyncio.to_thread(self.judging.stop, final, drain_seconds)
            self.closed, self.ledger = windows[:-1], windows[-1]
            return windows
        deadline = time.monotonic() + drain_seconds
        while len(self.queue) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self._stopping.set()
        await asyncio.to_thread(self._thread.join, drain_seconds)
        with self._lock:
            self._settle(self.ledger)
            return [*self.closed, self.ledger]

    def _settle(self, ledger: Ledger) -> None:
        """Give `ledger` the relay's counts since the last window closed."""
        stats = self.relay.stats
        messages, unjudged = self._counted
        ledger.messages = stats.messages - messages
        ledger.unjudged = stats.unjudged - unjudged
        ledger.connections = max(ledger.connections, stats.connections)
        self._counted = (stats.messages, stats.unjudged)

    def _judge_loop(self) -> None:
        queue = self.queue
        assert isinstance(queue, CopyQueue)  # the thread's queue; a process has its own loop
        while not (self._stopping.is_set() and not len(queue)):
            copy = queue.take(0.05)
            with self._lock:
                if copy is not None:
                    self.ledger.judged_messages += 1
                    self.watcher.judge(copy, self.ledger)
                self.ledger.messages = self.relay.stats.messages - self._counted[0]
                if self.rollover.due(self.ledger):
                    self._settle(self.ledger)
                    self.closed = [*self.closed, self.ledger][-MAX_WINDOWS:]
                    self.ledger = self._new_ledger()
                    self.ledger.logs = self.closed[-1].logs
