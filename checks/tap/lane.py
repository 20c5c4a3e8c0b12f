"""The pipe that carries copies to the judging process, written from the event loop's own thread.

A multiprocessing queue pickles and writes in a feeder thread, which then competes with the relay
for the GIL on every message. Here `put_nowait` pickles in place (protocol 5: a large payload kept
as a bytearray goes out of band, not copied into the pickle) and writes what the pipe takes at once;
the rest waits in a deque and goes out when the pipe is writable again (the loop watches it), so a
put never waits. Copies of small messages go out together, at most `BATCH_SECONDS` late or once
`BATCH_BYTES` of them wait: one pickle and one write for many, and the judging process wakes a few
hundred times a second instead of once a message, which leaves the cores to the relay and its peers.
The judging process reads frames back with `get`, one item at a time.

A frame (a list of items): header length and buffer count (two uint32), each buffer's length (uint64), the
pickle, then the buffers.
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
READ_SIZE = 64 * 1024  # what a read takes at once; a large buffer is then read straight into its own memory
IOV_MAX = 512
BATCH_SECONDS = 0.0005
BATCH_BYTES = 64 * 1024
MID_FRAME_SECONDS = 10.0  # the rest of a begun frame comes within this, or its writer is gone
COUNTS = struct.Struct("!II")
LENGTH = struct.Struct("!Q")


def frame_of(item: Any) -> list[memoryview]:
    buffers: list[pickle.PickleBuffer] = []
    header = memoryview(pickle.dumps(item, protocol=5, buffer_callback=buffers.append))
    raws = [buffer.raw() for buffer in buffers]
    prefix = COUNTS.pack(header.nbytes, len(raws)) + b"".join(LENGTH.pack(raw.nbytes) for raw in raws)
    return [memoryview(prefix), header, *raws]


class CopyLane:
    """One writer, one reader: the relay's process to the judging process (copies), or back (windows)."""

    def __init__(self, fds: tuple[int, int] | None = None, *, on_loop: bool = True) -> None:
        """A new pipe, or the (read, write) descriptors of one made elsewhere (an end of -1: not used here).

        `on_loop=False` for a writer that has no event loop of its own (the judging process sending its
        windows back; a forked one would still see the relay's loop as running): every put is written at
        once, and what the pipe does not take goes with the next put."""
        self._on_loop = on_loop
        self._read_fd, self._write_fd = fds if fds is not None else os.pipe()
        if self._write_fd >= 0:
            os.set_blocking(self._write_fd, False)
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(self._write_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        self._pending: deque[memoryview] = deque()
        self._lock = threading.Lock()  # `put` from a stopping thread may meet the loop's flush
        self._watched: asyncio.AbstractEventLoop | None = None
        self._batch: list[Any] = []  # items not framed yet, and their bytes
        self._batch_bytes = 0
        self._timer: asyncio.TimerHandle | None = None  # sends the batch when it fires
        self._closed = False
        self._inbox = bytearray()
        self._ready: deque[Any] = deque()  # items of the last frame read, not taken yet
        self._cut = False  # a frame ended early: nothing more can be read

    # ------------------------------------------------------------ the writer's side

    def put_nowait(self, item: Any, size: int = 0) -> None:
        """Send `item` (of `size` bytes) with the batch it joins; never waits, and drops it once closed."""
        with self._lock:
            if self._closed:
                return
            self._batch.append(item)
            self._batch_bytes += size
            if self._on_loop and self._batch_bytes < BATCH_BYTES and (self._timer is not None or self._start_timer()):
                return  # the timer sends it
            self._send_batch()

    def backlog(self) -> bool:
        """Whether something put is still waiting for the pipe."""
        return bool(self._pending or self._batch)

    def put(self, item: Any, timeout: float = 5.0) -> None:
        """Queue `item` after everything before it and wait (up to `timeout`) until the pipe took it all."""
        deadline = time.monotonic() + timeout
        with self._lock:
            self._batch.append(item)
            self._frame_batch()
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
            self._closed = True  # a timer still to fire, or a late put, sends nothing to a reused descriptor
            self._pending.clear()
            self._batch.clear()
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

    def _start_timer(self) -> bool:
        """Send the batch in `BATCH_SECONDS` (the lock held); False with no event loop in this thread."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._timer = loop.call_later(BATCH_SECONDS, self._timed_out)
        return True

    def _timed_out(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._send_batch()

    def _frame_batch(self) -> None:
        """The batch becomes one frame at the end of what is pending (the lock held)."""
        if self._batch:
            self._pending.extend(frame_of(self._batch))
            self._batch, self._batch_bytes = [], 0

    def _send_batch(self) -> None:
        """Frame the batch and write what the pipe takes now; the loop watches the pipe for the rest."""
        queued = bool(self._pending)
        self._frame_batch()
        if not queued:
            self._write()
        if self._pending and self._watched is None and self._on_loop:
            self._watch()

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
        if self._ready:
            return self._ready.popleft()
        if self._cut:
            time.sleep(timeout)
            raise queue.Empty
        deadline = time.monotonic() + timeout
        while (items := self._parse()) is None:
            remaining = max(0.0, deadline - time.monotonic())  # 0: what is there already, without waiting
            if not select.select([self._read_fd], [], [], remaining)[0]:
                raise queue.Empty
            data = os.read(self._read_fd, READ_SIZE)
            if not data:
                raise queue.Empty
            self._inbox += data
        self._ready.extend(items)
        return self._ready.popleft()  # a frame holds at least one item

    def _parse(self) -> Any:
        inbox = self._inbox
        if len(inbox) < COUNTS.size:
            return None
        header_size, count = COUNTS.unpack_from(inbox, 0)
        offset = COUNTS.size + count * LENGTH.size
        if len(inbox) < offset:
            return None
        sizes = [LENGTH.unpack_from(inbox, COUNTS.size + n * LENGTH.size)[0] for n in range(count)]
        if len(inbox) < offset + header_size:
            return None
        with memoryview(inbox) as view:
            header = bytes(view[offset : offset + header_size])
            offset += header_size
            buffers = []
            for size in sizes:  # what the inbox holds of each, then the rest read into it directly
                buffer = bytearray(size)
                have = min(size, len(inbox) - offset)
                buffer[:have] = view[offset : offset + have]
                offset += have
                self._read_into(memoryview(buffer)[have:])
                buffers.append(buffer)
        del inbox[:offset]
        items: list[Any] = pickle.loads(header, buffers=buffers)
        return items

    def _read_into(self, view: memoryview) -> None:
        """Fill `view` from the pipe: the rest of a frame the writer has begun (it writes frames whole, in order)."""
        while view:
            if not select.select([self._read_fd], [], [], MID_FRAME_SECONDS)[0]:
                self._cut = True  # the writer stopped in the middle of a frame: what follows is not a frame
                raise queue.Empty
            read = os.readv(self._read_fd, [view])
            if not read:
                self._cut = True
                raise queue.Empty
            view = view[read:]
