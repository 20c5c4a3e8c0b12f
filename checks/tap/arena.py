"""Shared memory for large WebSocket payloads between the relay and its judging process.

Without it a 2.25 MiB observation is copied three times on its way to the judges: gathered by the
relay's reader, written into the lane's pipe, read out of it. With it the reader gathers the
payload straight into a slot of memory both processes map, the copy that goes through the pipe
names the slot (a few bytes), and the judging process reads the payload where it lies.

A slot is claimed by the relay when a large frame's head arrives and freed by whichever side is
the last to need it: the judging process once the copy is judged, the relay when the copy is
dropped (the queue full) or the frame never ends (the stream over). Each flag has one writer at a
time (the relay sets a free one, the judging process clears the ones it was given), so no lock
is needed. With every slot busy, or a payload bigger than a slot, the reader gathers into memory
of its own and the bytes go through the pipe as before: nothing waits for a slot.

The memory is `multiprocessing.heap`'s (a file unlinked at once, so nothing outlives the
processes and no resource tracker is involved); a spawned judging process receives it the way it
receives the shared counters. Pages are only allocated where written, and the lowest free slot is
taken first, so a stream of frames keeps reusing the same pages.
"""

from __future__ import annotations

import multiprocessing.heap
import uuid
from typing import Any

SLOTS = 4
SLOT_SIZE = 8 * 1024 * 1024

_ATTACHED: dict[str, Arena] = {}  # this process's arenas by token: where an unpickled slot is looked up


class Arena:
    def __init__(self, context: Any, slots: int = SLOTS, slot_size: int = SLOT_SIZE) -> None:
        self.slot_size = slot_size
        self.token = uuid.uuid4().hex
        self.memory = multiprocessing.heap.BufferWrapper(slots * slot_size)
        self.busy = context.RawArray("b", slots)  # 1: holds a payload the judges have not finished with
        self._view: memoryview | None = None
        self.claimed = 0  # slots the relay took so far (its own count)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_view": None}  # a spawned process maps the memory again

    def view(self) -> memoryview:
        if self._view is None:
            self._view = self.memory.create_memoryview()
        return self._view

    def claim(self, length: int) -> SlotPayload | None:
        """A slot for a payload of `length` bytes (the relay's side); None when none is free or it is too big."""
        if length > self.slot_size:
            return None
        busy = self.busy
        for slot in range(len(busy)):
            if not busy[slot]:
                busy[slot] = 1
                self.claimed += 1
                return SlotPayload(self, slot)
        return None

    def free(self, slots: list[int]) -> None:
        for slot in slots:
            self.busy[slot] = 0

    def in_use(self) -> int:
        return sum(1 for flag in self.busy if flag)

    def attach(self) -> None:
        """Let copies naming this arena's slots be unpickled in this process (the judging side)."""
        _ATTACHED[self.token] = self

    def read(self, slot: int, length: int) -> memoryview:
        start = slot * self.slot_size
        return self.view()[start : start + length]


class SlotPayload:
    """A payload being gathered into a slot (the relay's side): grows by `extend`, pickles as the slot's name."""

    __slots__ = ("arena", "slot", "filled")

    def __init__(self, arena: Arena, slot: int) -> None:
        self.arena = arena
        self.slot = slot
        self.filled = 0

    def __len__(self) -> int:
        return self.filled

    def extend(self, data: bytes | memoryview) -> None:
        start = self.slot * self.arena.slot_size + self.filled
        size = len(data)
        self.arena.view()[start : start + size] = data
        self.filled += size

    def __reduce__(self) -> tuple[Any, tuple[str, int, int]]:
        return _slot_view, (self.arena.token, self.slot, self.filled)


def _slot_view(token: str, slot: int, length: int) -> memoryview:
    """The payload where it lies, in the judging process (valid until its slot is freed)."""
    return _ATTACHED[token].read(slot, length)
