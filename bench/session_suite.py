"""The cost of the openai-chat and session-server suites against bare httpx making the same calls, as concurrently.

Each suite runs against its reference server (the openai-chat reference
endpoint; the session reference server in v1 and v2 mode), served in-process
on a free 127.0.0.1 port behind a recorder that keeps every request (method,
path, body) with the moments the server started and finished answering it.
The bare replay then sends the same requests with one keep-alive httpx
client, nothing judged, under the same concurrency: a request waits only for
the requests that had been answered before it arrived in the recording, so
what ran in parallel in the suite runs in parallel in the replay too. Session
ids are mapped to the replay's own. Prints the median of each over several
rounds and their ratio.

    python bench/session_suite.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.asgi_server import serve_asgi  # noqa: E402
from checks.core import Suite, run_suite  # noqa: E402
from checks.openai.reference import make_app  # noqa: E402
from checks.openai.suite import SUITE as OPENAI_SUITE  # noqa: E402
from checks.session.reference import SessionServer  # noqa: E402
from checks.session.suite import SUITE as SESSION_SUITE  # noqa: E402

OPENAI_OPTIONS = {"concurrency": 8, "repeats": 3, "context_window": 4096}


@dataclass
class Call:
    method: str
    path: str
    body: bytes
    started: float
    finished: float = float("inf")
    created: bytes = b""  # the answer to POST /sessions, to map its session id
    after: list[int] = field(default_factory=list)  # calls answered before this one arrived


class Recorder:
    """ASGI wrapper keeping every HTTP request and when the server started and finished answering it."""

    def __init__(self, app: Any) -> None:
        self.app, self.calls = app, []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        call = Call(scope["method"], scope["path"], b"", time.perf_counter())
        self.calls.append(call)
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            call.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        pending = iter(messages)

        async def replayed() -> Any:
            nxt = next(pending, None)
            if nxt is None:
                await asyncio.Event().wait()
            return nxt

        async def sending(message: Any) -> None:
            if call.path == "/sessions" and message["type"] == "http.response.body":
                call.created += message.get("body", b"")
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                call.finished = time.perf_counter()

        await self.app(scope, replayed, sending)


def ordered(calls: list[Call]) -> list[Call]:
    """The calls in arrival order, each knowing the calls it must wait for (those answered before it arrived)."""
    calls = sorted(calls, key=lambda c: c.started)
    for index, call in enumerate(calls):
        call.after = [j for j in range(index) if calls[j].finished <= call.started]
    return calls


async def replay(base: str, calls: list[Call]) -> None:
    """The recorded calls with one bare keep-alive client, as concurrently as they ran, nothing judged."""
    done = [asyncio.Event() for _ in calls]
    ids: dict[str, str] = {}

    async def send(index: int, call: Call, client: httpx.AsyncClient) -> None:
        for j in call.after:
            await done[j].wait()
        path, body = call.path, call.body
        for old, new in ids.items():
            path, body = path.replace(old, new), body.replace(old.encode(), new.encode())
        response = await client.request(call.method, base + path, content=body or None)
        if call.created:
            ids[json.loads(call.created)["session_id"]] = response.json()["session_id"]
        done[index].set()

    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=10, limits=limits) as client:
        await asyncio.gather(*(send(i, call, client) for i, call in enumerate(calls)))


async def one_round(app: Any, suite: Suite, path: str, options: dict[str, Any]) -> tuple[float, float, int, int, str]:
    """Suite time, replay time, calls, the most calls in flight at once, and the suite's outcome."""
    recorder = Recorder(app)
    server = await serve_asgi(recorder)
    try:
        started = time.perf_counter()
        report = await run_suite(suite, server.url + path, options)
        suite_time = time.perf_counter() - started
        calls = ordered(recorder.calls)
        started = time.perf_counter()
        await replay(server.url, calls)
        bare_time = time.perf_counter() - started
    finally:
        await server.close()
    edges = sorted([(c.started, 1) for c in calls] + [(c.finished, -1) for c in calls])
    peak = max(sum(step for _, step in edges[: i + 1]) for i in range(len(edges)))
    return suite_time, bare_time, len(calls), peak, str(report.outcome())


def compare(title: str, make: Any, suite: Suite, path: str, options: dict[str, Any], rounds: int) -> None:
    results = [asyncio.run(one_round(make(), suite, path, options)) for _ in range(rounds)]
    suite_median = statistics.median(r[0] for r in results)
    bare_median = statistics.median(r[1] for r in results)
    calls, peak, outcome = results[-1][2:]
    print(f"{title}: {calls} HTTP calls per run, up to {peak} in flight, outcome {outcome}")
    print(
        f"  suite      {suite_median * 1000:8.1f} ms (median of {rounds}), {suite_median / calls * 1000:.2f} ms a call"
    )
    print(
        f"  bare httpx {bare_median * 1000:8.1f} ms (the same calls, as concurrently, unjudged), "
        f"{bare_median / calls * 1000:.2f} ms a call"
    )
    print(f"  ratio      {suite_median / bare_median:8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    compare("openai-chat suite", make_app, OPENAI_SUITE, "/v1", OPENAI_OPTIONS, args.rounds)
    for tree in ("v1", "v2"):
        compare(
            f"session-server suite ({tree})",
            lambda tree=tree: SessionServer(tree).app,
            SESSION_SUITE,
            "",
            {"timeout": 5},
            args.rounds,
        )


if __name__ == "__main__":
    main()
