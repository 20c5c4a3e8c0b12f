"""Failed logins and wrong bearer tokens, counted per client: past the limit a minute, 429.

Without a limit the API token could be guessed at network speed. Only a
credential that was presented and wrong counts (a missing one is no guess);
while a client is over the limit every attempt, right or wrong, gets 429.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from fastapi import HTTPException, Request, status

WINDOW_SECONDS = 60.0
MAX_CLIENTS = 10_000  # tracked at once; the oldest are forgotten first, so memory stays bounded


class FailureLimit:
    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self.failures: dict[str, deque[float]] = {}
        self.lock = threading.Lock()  # sync routes run in a thread pool

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self.failures.get(client, deque())
        while times and times[0] <= now - WINDOW_SECONDS:
            times.popleft()
        return times

    def check(self, client: str) -> None:
        """HTTPException 429 while `client` has used up its failures of the last minute."""
        now = time.monotonic()
        with self.lock:
            times = self._recent(client, now)
            if len(times) < self.per_minute:
                return
            retry = max(1, int(times[0] + WINDOW_SECONDS - now) + 1)
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            f"too many failed authentication attempts from {client}; try again in {retry} s",
            headers={"Retry-After": str(retry)},
        )

    def failed(self, client: str) -> None:
        now = time.monotonic()
        with self.lock:
            times = self._recent(client, now)
            times.append(now)
            self.failures.pop(client, None)
            self.failures[client] = times  # most recently failed last
            while len(self.failures) > MAX_CLIENTS:
                del self.failures[next(iter(self.failures))]


def client_of(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def auth_limit(request: Request) -> FailureLimit:
    limit: FailureLimit = request.app.state.auth_limit
    return limit
