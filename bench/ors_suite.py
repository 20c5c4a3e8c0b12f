"""The cost of the ors suite against bare httpx making the same calls, side by side in one run.

The suite runs (default phases, the reference's big-output and raising tools
named) against the ORS reference server, served in-process on a free
127.0.0.1 port behind a recorder that keeps every request (method, path,
X-Session-ID, Accept, body). The bare replay then sends the same requests in
the same order with one keep-alive httpx client to a fresh reference server,
reading each body whole and judging nothing (the server takes any session id,
so the recorded ones are reused; a resume's task id is unknown there and
answers a short error event). Prints the median of each over several rounds
and their ratio; the goal is at most 1.5.

    python bench/ors_suite.py [--rounds 5]
"""

from __future__ import annotations

import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.rounds import run_with_rounds  # noqa: E402
from checks.asgi_server import serve_asgi  # noqa: E402
from checks.core import run_suite  # noqa: E402
from checks.ors.reference import OrsServer  # noqa: E402
from checks.ors.suite import SUITE  # noqa: E402

OPTIONS = {"big_output_tool": "dump", "big_output_input": {"size": 10_000}, "raising_tool": "fail"}
KEPT_HEADERS = ("x-session-id", "accept", "content-type")


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Recorder:
    """ASGI wrapper keeping every HTTP request in arrival order."""

    def __init__(self, app: Any) -> None:
        self.app, self.calls = app, []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()
        chunks = []
        while True:
            message = await receive()
            chunks.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"] if k.decode() in KEPT_HEADERS}
        self.calls.append(Call(scope["method"], scope["path"], headers, bytes(body)))

        async def replay_receive() -> Any:
            return chunks.pop(0) if chunks else await receive()

        await self.app(scope, replay_receive, send)


async def suite_round() -> tuple[float, list[Call]]:
    recorder = Recorder(OrsServer().app)
    server = await serve_asgi(recorder)
    try:
        started = time.perf_counter()
        report = await run_suite(SUITE, server.url, OPTIONS)
        elapsed = time.perf_counter() - started
    finally:
        await server.close()
    assert report.outcome().value == "pass", report.outcome()
    return elapsed, recorder.calls


async def bare_round(calls: list[Call]) -> float:
    server = await serve_asgi(OrsServer().app)
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            started = time.perf_counter()
            for call in calls:
                async with client.stream(call.method, call.path, content=call.body, headers=call.headers) as reply:
                    await reply.aread()
            return time.perf_counter() - started
    finally:
        await server.close()


async def main(rounds: int) -> None:
    suite_times, bare_times = [], []
    for _ in range(rounds):
        elapsed, calls = await suite_round()
        suite_times.append(elapsed)
        bare_times.append(await bare_round(calls))
    suite, bare = statistics.median(suite_times), statistics.median(bare_times)
    print(f"ors suite: {suite * 1000:.0f} ms for {len(calls)} requests; bare httpx replay: {bare * 1000:.0f} ms")
    print(f"ratio suite / bare: {suite / bare:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    run_with_rounds(main, __doc__, default=5)
