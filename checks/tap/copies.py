"""The bounded queue between forwarding and judging: offering never blocks, a full queue drops the copy.

Bounded by count and by bytes, so a burst of 2.25 MiB frames cannot grow the tap's memory; the
relay counts what was dropped and marks the next copy of that connection as following a gap, so
judges that keep per-connection order stop judging order there instead of judging it wrongly.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass
class Copy:
    """A copy of one message: its connection, who sent it (client, server, or the tap itself), and what it was."""

    connection: int
    sender: str
    item: Any
    size: int
    at: float
    after_gap: bool = False
    number: int = 0  # the relay's count of messages when this one came (the dropped ones included)


class Offer(Protocol):
    """Where the relay offers copies: this queue (judging thread) or `judging_process.ProcessQueue`."""

    def offer(self, copy: Copy) -> bool: ...

    def __len__(self) -> int: ...


class CopyQueue:
    def __init__(self, max_items: int = 4096, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: deque[Copy] = deque()
        self._bytes = 0
        self._ready = threading.Condition()

    def offer(self, copy: Copy) -> bool:
        """Queue `copy` unless the queue is full; never waits."""
        with self._ready:
            if len(self._items) >= self.max_items or self._bytes + copy.size > self.max_bytes:
                return False
            self._items.append(copy)
            self._bytes += copy.size
            self._ready.notify()
            return True

    def take(self, timeout: float) -> Copy | None:
        with self._ready:
            if not self._items and not self._ready.wait(timeout):
                return None
            if not self._items:
                return None
            copy = self._items.popleft()
            self._bytes -= copy.size
            return copy

    def __len__(self) -> int:
        return len(self._items)
