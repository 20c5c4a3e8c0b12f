"""A deadline for each await of one Join session, with one timer for all of them.

`asyncio.timeout` schedules a timer for every await and cancels it after: on a
step path (a write and a read per step) that was a quarter of the checker's own
cost. Here an await only notes when it must end; the one timer, when it fires
before that end, moves to it, so it is rescheduled about once per deadline
rather than twice per step. An await that outlives its end raises TimeoutError,
as under `asyncio.timeout`.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class Deadlines:
    """Use as `with deadlines.within(seconds): await ...`, one await at a time (the session's own)."""

    def __init__(self) -> None:
        self._handle: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self._end = 0.0
        self._left = 0.0
        self._expired = False

    def within(self, seconds: float) -> Deadlines:
        self._left = seconds
        return self

    def __enter__(self) -> Deadlines:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        if task is None or self._task is not None:
            raise RuntimeError("a session's deadlines bound one await of a task at a time")
        self._task, self._cancelling, self._expired = task, task.cancelling(), False
        self._end = loop.time() + self._left
        if self._handle is None or self._handle.when() > self._end:
            if self._handle is not None:
                self._handle.cancel()
            self._handle = loop.call_at(self._end, self._fire)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        task, self._task = self._task, None
        if self._expired and task is not None and task.uncancel() <= self._cancelling:
            if kind is asyncio.CancelledError:
                raise TimeoutError from error

    def _fire(self) -> None:
        self._handle = None
        if self._task is None:
            return  # no await is running: the next one schedules the timer again
        loop = asyncio.get_running_loop()
        if loop.time() < self._end:
            self._handle = loop.call_at(self._end, self._fire)
            return
        self._expired = True
        self._task.cancel()

    def stop(self) -> None:
        """Cancel the timer (the session is over)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
