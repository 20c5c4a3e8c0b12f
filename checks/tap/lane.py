"""The pipe that carries copies to the judging process, written from the event loop's own thread.

A multiprocessing queue pickles and writes in a feeder thread, which then competes with the relay
for the GIL on every message. Here `put_nowait` pickles in place (protocol 5: a large payload kept
as a bytearray goes out of band, not copied into the pickle) and writes what the pipe takes at once;
the rest waits in a deque and goes out when the pipe is writable again (the loop watches it), so a
put never waits. The judging process reads frames back with `get`.

A frame: header length and buffer count (two uint32), each buffer's length (uint64), the pickle, then
the buffers.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import os
import pickle
import queue
import select
import struct
import threading
import time
from collections import deque
from typing import Any

PIPE_SIZE = 1024 * 1024  # Linux's default maximum for an unprivileged process
READ_SIZE = 1024 * 1024
IOV_MAX = 512
COUNTS = struct.Struct("!II")
LENGTH = struct.Struct("!Q")


def frame_of(item: Any) -> list[memoryview]:
    buffers: list[pickle.PickleBuffer] = []
    header = memoryview(pickle.dumps(item, protocol=5, buffer_callback=buffers.append))
    raws = [buffer.raw() for buffer in buffers]
    prefix = COUNTS.pack(header.nbytes, len(raws)) + b"".join(LENGTH.pack(raw.nbytes) for raw in raws)
    return [memoryview(prefix), header, *raws]


class CopyLane:
    """One writer (the relay's process), one reader (the judging process, after the fork)."""

    def __init__(self) -> None:
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        with contextlib.suppress(OSError, AttributeError):
            fcntl.fcntl(self._write_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        self._pending: deque[memoryview] = deque()
        self._lock = threading.Lock()  # `put` from a stopping thread may meet the loop's flush
        self._watched: asyncio.AbstractEventLoop | None = None
        self._inbox = bytearray()

    # ------------------------------------------------------------ the writer's side

    def put_nowait(self, item: Any) -> None:
        parts = frame_of(item)
        with self._lock:
            queued = bool(self._pending)
            self._pending.extend(parts)
            if not queued:
                self._write()
            if self._pending and self._watched is None:
                self._watch()

    def put(self, item: Any, timeout: float = 5.0) -> None:
        """Queue `item` after everything before it and wait (up to `timeout`) until the pipe took it all."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._pending.extend(frame_of(item))
        while time.monotonic() < deadline:
            with self._lock:
                self._write()
                if not self._pending:
                    return
            select.select([], [self._write_fd], [], max(0.0, min(0.05, deadline - time.monotonic())))
        raise OSError("the judging process took nothing for the whole timeout")

    def close(self) -> None:
        """Drop what is pending and close both ends (the judging process is gone); from any thread."""
        with self._lock:
            self._pending.clear()
            loop, self._watched = self._watched, None
        if loop is None:
            self._close_fds()
            return
        try:  # only the loop may stop watching the pipe, and before its descriptor is closed
            loop.call_soon_threadsafe(self._unwatch_and_close, loop)
        except RuntimeError:  # the loop is closed: nothing watches any more
            self._close_fds()

    def _unwatch_and_close(self, loop: asyncio.AbstractEventLoop) -> None:
        loop.remove_writer(self._write_fd)
        self._close_fds()

    def _close_fds(self) -> None:
        for fd in (self._read_fd, self._write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _watch(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop in this thread: `put` or the next `put_nowait` writes the rest
        loop.add_writer(self._write_fd, self._flush)
        self._watched = loop

    def _flush(self) -> None:
        with self._lock:
            self._write()
            if not self._pending and self._watched is not None:
                self._watched.remove_writer(self._write_fd)
                self._watched = None

    def _write(self) -> None:
        """Write what the pipe takes now (the lock held)."""
        pending = self._pending
        while pending:
            try:
                written = os.writev(self._write_fd, list(itertools.islice(pending, IOV_MAX)))
            except BlockingIOError:
                return
            except OSError:  # closed: the judging process is gone, and so is what it would have judged
                pending.clear()
                return
            while written and pending:
                first = pending[0]
                if written >= first.nbytes:
                    written -= first.nbytes
                    pending.popleft()
                else:
                    pending[0] = first[written:]
                    written = 0

    # ------------------------------------------------------------ the reader's side

    def get(self, timeout: float) -> Any:
        """The next item, waiting up to `timeout` seconds; `queue.Empty` when none came."""
        deadline = time.monotonic() + timeout
        while (item := self._parse()) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._read_fd], [], [], remaining)[0]:
                raise queue.Empty
            data = os.read(self._read_fd, READ_SIZE)
            if not data:
                raise queue.Empty
            self._inbox += data
        return item

    def _parse(self) -> Any:
        inbox = self._inbox
        if len(inbox) < COUNTS.size:
            return None
        header_size, count = COUNTS.unpack_from(inbox, 0)
        offset = COUNTS.size + count * LENGTH.size
        if len(inbox) < offset:
            return None
        sizes = [LENGTH.unpack_from(inbox, COUNTS.size + n * LENGTH.size)[0] for n in range(count)]
        if len(inbox) < offset + header_size + sum(sizes):
            return None
        with memoryview(inbox) as view:
            header = bytes(view[offset : offset + header_size])
            offset += header_size
            buffers = []
            for size in sizes:
                buffers.append(bytearray(view[offset : offset + size]))
                offset += size
        del inbox[:offset]
        return pickle.loads(header, buffers=buffers)
