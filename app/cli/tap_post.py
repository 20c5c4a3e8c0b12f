"""`rlconform tap --post SERVICE_URL --target NAME`: send each window to a service as a tap run of a target.

The open window is posted every `--post-every` seconds (its counters so far) and each closed window
once it closed. Posting never holds up forwarding: it runs on the tap's event loop with short
timeouts. While the service is unreachable the windows wait here, at most `MAX_PENDING` closed ones
(the oldest go first, counted) plus the open one, so memory stays bounded however long the outage;
they are sent, oldest first, once it answers. The service stores a window posted twice once.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

import httpx

MAX_PENDING = 50  # closed windows kept while the service is unreachable
POST_TIMEOUT = 5.0


@dataclass
class Pending:
    number: int
    closed: bool
    ledger: dict[str, Any]
    rate: float


class WindowPoster:
    """Keeps what a tap has not delivered yet and delivers it, oldest first, whenever the service answers."""

    def __init__(
        self, service: str, target: str, kind: str, upstream: str, token: str | None, max_pending: int = MAX_PENDING
    ) -> None:
        self.url = f"{service.rstrip('/')}/api/v1/targets/{target}/tap-windows"
        self.kind, self.upstream = kind, upstream
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.session_id = uuid.uuid4().hex[:16]
        self.pending: deque[Pending] = deque()
        self.max_pending = max_pending
        self.live: Pending | None = None
        self.dropped = 0  # closed windows given up while the service was unreachable
        self.delivered = 0
        self.last_problem = ""
        self.refused = ""  # the service answered no (a wrong target or token): posting stops

    def closed(self, number: int, ledger: dict[str, Any], rate: float) -> None:
        self.pending.append(Pending(number, True, ledger, rate))
        while len(self.pending) > self.max_pending:
            self.pending.popleft()
            self.dropped += 1
        if self.live is not None and self.live.number <= number:
            self.live = None

    def open(self, number: int, ledger: dict[str, Any], rate: float) -> None:
        self.live = Pending(number, False, ledger, rate)

    def _body(self, item: Pending) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "number": item.number,
            "closed": item.closed,
            "kind": self.kind,
            "upstream": self.upstream,
            "messages_per_second": round(max(item.rate, 0.0), 2),
            "ledger": item.ledger,
        }

    async def send(self, http: httpx.AsyncClient) -> bool:
        """Deliver what waits, oldest first; False (the rest kept) at the first failure."""
        if self.refused:
            return False
        waiting = [*self.pending, *([self.live] if self.live is not None else [])]
        for item in waiting:
            try:
                response = await http.post(self.url, json=self._body(item), headers=self.headers)
            except httpx.HTTPError as exc:
                self._problem(f"the service is unreachable ({type(exc).__name__}); the tap keeps forwarding")
                return False
            if response.status_code >= 500 or response.status_code == 429:
                self._problem(f"the service answered {response.status_code}; will send again")
                return False
            if response.status_code >= 400:
                self.refused = f"the service refused the window: {response.status_code} {response.text[:300]}"
                print(f"tap: {self.refused}; posting stops", file=sys.stderr, flush=True)
                return False
            if item.closed:
                self.pending.popleft()
                self.delivered += 1
            if self.last_problem:
                print("tap: the service answers again; sending what waited", file=sys.stderr, flush=True)
                self.last_problem = ""
        return True

    def _problem(self, text: str) -> None:
        if text != self.last_problem:  # said once per outage, not every attempt
            print(f"tap: {text}", file=sys.stderr, flush=True)
        self.last_problem = text

    def report(self) -> str:
        left = len(self.pending)
        text = f"tap: posted {self.delivered} windows to {self.url.rsplit('/api/', 1)[0]}"
        if left:
            text += f"; {left} could not be sent"
        if self.dropped:
            text += f"; {self.dropped} older windows dropped while the service was unreachable"
        return text


def poster_from(args: Any, kind: str) -> WindowPoster | None:
    if not args.post:
        return None
    token = args.token or os.environ.get("RLCONFORM_API_TOKEN")
    return WindowPoster(args.post, args.target, kind, args.upstream, token)


def new_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=POST_TIMEOUT)


class WindowFeed:
    """Hands a running tap's windows to a poster: each closed one once, then the open one's counters."""

    def __init__(self, poster: WindowPoster) -> None:
        self.poster = poster
        self.handled: Any = None  # the last closed window handed over (the tap keeps at most its last 100)
        self.number = 0  # closed windows handed over so far
        self.last = (time.monotonic(), 0)

    def _rate(self, messages: int) -> float:
        now = time.monotonic()
        then, before = self.last
        self.last = (now, messages)
        return (messages - before) / max(now - then, 1e-6)

    def take(self, closed: list[Any], live: Any, messages: int, latency: dict[str, float] | None = None) -> None:
        """Closed windows not handed over yet (evidence in them is already scrubbed of credentials), then `live`."""
        start = next((i + 1 for i, window in enumerate(closed) if window is self.handled), 0) if self.handled else 0
        for window in closed[start:]:
            self.number += 1
            self.poster.closed(self.number, window.to_dict(), window.messages / max(window.elapsed(), 1e-6))
            self.handled = window
        if live is not None:
            self.poster.open(self.number + 1, live.to_dict() | (latency or {}), self._rate(messages))

    def take_final(self, windows: list[Any]) -> None:
        """The tap stopped: every window not handed over yet, the last one closed too."""
        start = next((i + 1 for i, window in enumerate(windows) if window is self.handled), 0) if self.handled else 0
        self.take(windows[start:], None, 0)


async def post_loop(tap: Any, feed: WindowFeed, http: httpx.AsyncClient, every: float) -> None:
    """Until cancelled: every `every` seconds hand the tap's windows over and try to deliver them."""
    while True:
        await asyncio.sleep(every)
        live = tap.live()
        closed = tap.judging.closed if tap.judging is not None else list(tap.closed)
        feed.take(closed, live, tap.messages(), tap.relay.stats.forward_latency())
        await feed.poster.send(http)


async def deliver_last(feed: WindowFeed, http: httpx.AsyncClient, tries: int = 3, pause: float = 1.0) -> None:
    for attempt in range(tries):
        if await feed.poster.send(http) or feed.poster.refused:
            return
        if attempt + 1 < tries:
            await asyncio.sleep(pause)
