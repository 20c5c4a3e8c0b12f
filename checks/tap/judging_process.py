"""Judging in a process of its own, so judges never share the GIL with forwarding.

The relay offers each copy to `ProcessQueue`: counted against its bounds (items and bytes still in
flight, as the judging process reports what it took) and written to a pipe from the event loop's
own thread (`lane.CopyLane`: no feeder thread to compete for the GIL), so `offer` never waits; a
full queue drops the copy as `CopyQueue` does. The judging process is forked where the relay's
process is a plain one (the standalone tap: the kind's watcher needs no pickling), or spawned where it
runs threads and database connections of its own (a tap the service hosts), and then makes the
kind's watcher again from `TapSpec.origin`. It runs the same loop as the judging thread: each copy
is judged into the window's ledger, and windows roll over by time or by the relay's message count
(each copy carries its number). A large WebSocket payload reaches it in shared memory
(`arena.Arena`), not through the pipe. Closed windows and a live snapshot of the open one come back
through a second lane;
`stop` sends the relay's final counts and takes the last window.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from checks.tap.arena import Arena
from checks.tap.copies import Copy
from checks.tap.lane import CopyLane
from checks.tap.ledger import Ledger, Rollover

LIVE_EVERY = 0.5  # seconds between live snapshots of the open window
MAX_WINDOWS = 100
NICENESS = 10


@dataclass
class Final:
    """The relay's counts when it stopped: the last window's messages include the copies it dropped."""

    messages: int
    unjudged: int
    connections: int


class ProcessQueue:
    """The relay's side: bounded by copies and bytes not yet taken by the judging process; never waits.

    `start="spawn"` starts the judging process afresh instead of forking this one: for a process with
    threads (a service), where a fork could copy a lock another thread holds."""

    def __init__(self, max_items: int = 4096, max_bytes: int = 64 * 1024 * 1024, start: str = "fork") -> None:
        context = multiprocessing.get_context(start)
        self.context: Any = context  # a fork or spawn context: both have Process
        self.max_items = max_items
        self.max_bytes = max_bytes
        # Windows come back through a pipe of the same kind (no multiprocessing.Queue: its named semaphores
        # outlive a service that a signal ends, and the resource tracker then reports them leaked).
        self.child_reader: Any = None  # spawned: the copies pipe's read end as the child receives it
        self.child_writer: Any = None  # spawned: the windows pipe's write end as the child receives it
        if start == "fork":
            self.copies, self.results = CopyLane(), CopyLane(on_loop=False)
        else:
            self.child_reader, writer = context.Pipe(duplex=False)
            self.copies = CopyLane((-1, os.dup(writer.fileno())))
            writer.close()
            reader, self.child_writer = context.Pipe(duplex=False)
            self.results = CopyLane((os.dup(reader.fileno()), -1))
            reader.close()
        self.arena = Arena(context)  # large payloads, gathered where the judging process reads them
        # Written by the judging process only (one writer), read here: no lock needed.
        self.taken_items = context.RawValue("q", 0)
        self.taken_bytes = context.RawValue("q", 0)
        self.offered_items = 0
        self.offered_bytes = 0

    def offer(self, copy: Copy) -> bool:
        if self.offered_items - self.taken_items.value >= self.max_items:
            return False
        if self.offered_bytes - self.taken_bytes.value + copy.size > self.max_bytes:
            return False
        self.copies.put_nowait(copy, copy.size)
        self.offered_items += 1
        self.offered_bytes += copy.size
        return True

    def __len__(self) -> int:
        return self.offered_items - int(self.taken_items.value)


class Judge:
    """The judging process's loop: the same ledger keeping as the judging thread's."""

    def __init__(
        self, new_ledger: Callable[[], Ledger], watcher: Any, rollover: Rollover, lane: Any, parent: int = 0
    ) -> None:
        self.new_ledger = new_ledger
        self.watcher = watcher
        self.rollover = rollover
        self.lane = lane  # the ProcessQueue (forked), or a JudgeLane over the same pipe and counters (spawned)
        self.ledger = new_ledger()
        self.counted = 0  # relay messages assigned to closed windows
        self.connections = 0
        self.live_at = 0.0
        self.parent = parent or os.getpid()  # read before the fork: the process that owns the relay

    def run(self) -> None:
        self.lane.arena.attach()
        signal.set_wakeup_fd(-1)  # the parent's event loop owns that descriptor, not this process
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops this process, a Ctrl-C does not
        with contextlib.suppress(OSError):
            os.nice(NICENESS)  # on a busy machine the relay gets the CPU first; a full lane then samples
        while True:
            try:
                item = self.lane.copies.get(timeout=0.05)
            except queue.Empty:
                if os.getppid() != self.parent:
                    return  # the relay's process is gone (killed): nobody to judge for
                item = None
            if isinstance(item, Final):
                self.finish(item)
                return
            if item is not None:
                self.take(item)
            self.roll_if_due()
            if time.monotonic() - self.live_at >= LIVE_EVERY:
                self.live_at = time.monotonic()
                if not self.lane.results.backlog():  # the relay took the last one: only the newest matters
                    self.lane.results.put_nowait(("live", self.ledger))

    def take(self, copy: Copy) -> None:
        self.lane.taken_items.value += 1
        self.lane.taken_bytes.value += copy.size
        self.connections = max(self.connections, copy.connection)
        self.ledger.judged_messages += 1
        try:
            self.watcher.judge(copy, self.ledger)
        except Exception as exc:  # a watcher's bug: counted, judging goes on with the next copy
            self.ledger.judge_faults.append(f"connection {copy.connection}: {exc!r}")
        self.lane.arena.free(getattr(copy.item, "slots", []))  # judged: the relay may gather into them again
        self.ledger.messages = copy.number - self.counted
        self.ledger.unjudged = self.ledger.messages - self.ledger.judged_messages
        self.ledger.connections = self.connections

    def roll_if_due(self) -> None:
        if not self.rollover.due(self.ledger):
            return
        closed = self.ledger
        self.counted += closed.messages
        self.lane.results.put_nowait(("closed", closed))
        self.ledger = self.new_ledger()
        self.ledger.logs = closed.logs

    def finish(self, final: Final) -> None:
        self.ledger.messages = final.messages - self.counted
        self.ledger.unjudged = max(0, self.ledger.messages - self.ledger.judged_messages)
        self.ledger.connections = final.connections
        with contextlib.suppress(OSError):  # the relay's process is gone: nobody to take it
            self.lane.results.put(("final", self.ledger))


@dataclass
class JudgeLane:
    """What a spawned judging process gets of the `ProcessQueue`: the pipe's read end and the shared counters."""

    copies: CopyLane
    taken_items: Any
    taken_bytes: Any
    results: CopyLane
    arena: Arena


def judge_spawned(
    origin: tuple[str, tuple[tuple[str, str], ...]],
    rollover: Rollover,
    pipes: tuple[Any, Any],
    counters: tuple[Any, Any],
    parent: int,
    arena: Arena,
) -> None:
    """A spawned judging process: the kind's tap made again from its origin, then the judging loop."""
    from checks.tap.kinds import tap_spec
    from checks.tap.spec import shorten_switch_interval

    shorten_switch_interval()  # the judging process is the tap's own: its lane's threads yield to it often
    spec = tap_spec(origin[0], dict(origin[1]))
    reader, writer = pipes  # kept referenced: their descriptors are the lanes'
    copies, results = CopyLane((reader.fileno(), -1)), CopyLane((-1, writer.fileno()), on_loop=False)
    judge_lane = JudgeLane(copies, *counters, results, arena)

    def new_ledger() -> Ledger:
        return Ledger(spec.catalogue, spec.active_only, spec.raised)

    Judge(new_ledger, spec.watcher(), rollover, judge_lane, parent).run()


class ProcessJudging:
    """The parent's handle on the judging process: start it, read its windows, stop it."""

    def __init__(
        self,
        new_ledger: Callable[[], Ledger],
        watcher: Any,
        rollover: Rollover,
        lane: ProcessQueue,
        origin: tuple[str, tuple[tuple[str, str], ...]] = ("", ()),
    ) -> None:
        self.lane = lane
        self.judge = Judge(new_ledger, watcher, rollover, lane)
        self.closed: list[Ledger] = []
        self.live: Ledger = self.judge.ledger
        self.final: Ledger | None = None
        if lane.child_reader is None:
            self.process = lane.context.Process(target=self.judge.run, name="tap-judges", daemon=True)
            return
        if not origin[0]:
            raise ValueError("a spawned judging process needs the tap's origin (made by checks.tap.kinds.tap_spec)")
        pipes, counters = (lane.child_reader, lane.child_writer), (lane.taken_items, lane.taken_bytes)
        self.process = lane.context.Process(
            target=judge_spawned,
            args=(origin, rollover, pipes, counters, os.getpid(), lane.arena),
            name="tap-judges",
            daemon=True,
        )

    def start(self) -> None:
        self.process.start()
        for end in (self.lane.child_reader, self.lane.child_writer):
            if end is not None:
                end.close()  # the child has its own: this one would keep the pipe open past it

    def collect(self, wait: float = 0.0) -> None:
        """Take what the judging process sent back (waiting up to `wait` seconds for its final window)."""
        deadline = time.monotonic() + wait
        while True:
            try:
                kind, ledger = self.lane.results.get(timeout=max(0.0, deadline - time.monotonic()) if wait else 0.0)
            except (queue.Empty, EOFError, OSError):
                return
            if kind == "closed":
                self.closed = [*self.closed, ledger][-MAX_WINDOWS:]
                self.live = ledger
            elif kind == "live":
                self.live = ledger
            else:
                self.final = self.live = ledger
                return

    def stop(self, final: Final, wait: float) -> list[Ledger]:
        """Send the relay's final counts, take the last window (up to `wait` seconds), end the process."""
        with contextlib.suppress(ValueError, OSError):
            self.lane.copies.put(final)
        deadline = time.monotonic() + wait
        while self.final is None and self.process.is_alive() and time.monotonic() < deadline:
            self.collect(wait=min(0.1, max(0.0, deadline - time.monotonic())))
        self.collect()
        self.process.join(1.0)
        if self.process.is_alive() and self.process.pid is not None:
            os.kill(self.process.pid, signal.SIGKILL)  # our own child, by its pid
            self.process.join(1.0)
        self.lane.copies.close()  # copies still queued for a dead judge are dropped, not waited on
        self.lane.results.close()
        last = self.final or self.live
        if self.final is None:  # the judging process died or did not finish in time: its last snapshot, settled
            last.messages, last.connections = final.messages - sum(w.messages for w in self.closed), final.connections
            last.unjudged = max(0, last.messages - last.judged_messages)
        return [*self.closed, last]
