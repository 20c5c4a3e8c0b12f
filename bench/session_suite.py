"""The cost of the openai-chat suite against bare httpx making the same calls to the same endpoint.

Serves the suite's reference endpoint on a free 127.0.0.1 port, runs the whole
suite while recording every request it sends, then replays those requests
with a bare httpx client (same bodies, same order, streams read to the end,
nothing judged). Prints the median of each over several rounds and their ratio.
The session-server half does the same for the session-server suite against
both modes of the reference session server: every request the suite sends
(session routes and proxy) is recorded at the server, then replayed serially
with bare httpx, session ids mapped to the replay's own.

    python bench/session_suite.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checks.core import run_suite  # noqa: E402
from checks.openai.reference import ReferenceModel, make_app  # noqa: E402
from checks.openai.suite import SUITE  # noqa: E402
from checks.session.reference import SessionServer, serve_app  # noqa: E402
from checks.session.suite import SUITE as SESSION_SUITE  # noqa: E402
from tests.checks.openenv.serving import serve_in_thread  # noqa: E402

OPTIONS = {"concurrency": 8, "repeats": 3, "context_window": 4096}


class Recording(ReferenceModel):
    """The reference endpoint, keeping each valid chat body it answers."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def answer(self, body: dict[str, Any]) -> Any:
        self.bodies.append(body)
        return await super().answer(body)


async def bare(url: str, bodies: list[dict[str, Any]]) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        await client.get(url + "/models")
        for body in bodies:
            if body.get("stream"):
                async with client.stream("POST", url + "/chat/completions", json=body) as response:
                    async for _ in response.aiter_lines():
                        pass
            else:
                (await client.post(url + "/chat/completions", json=body)).json()


class Recorder:
    """ASGI wrapper keeping (method, path, body, created session id) of every request, in arrival order."""

    def __init__(self, app: Any) -> None:
        self.app, self.calls = app, []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        messages, body = [], b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        entry: list[Any] = [scope["method"], scope["path"], body, b""]
        self.calls.append(entry)
        pending = iter(messages)

        async def replayed() -> Any:
            nxt = next(pending, None)
            if nxt is None:
                await asyncio.Event().wait()
            return nxt

        async def sending(message: Any) -> None:
            if entry[1] == "/sessions" and message["type"] == "http.response.body":
                entry[3] += message.get("body", b"")
            await send(message)

        await self.app(scope, replayed, sending)


async def session_round(tree: str) -> tuple[float, float, int, str]:
    server = SessionServer(tree)  # type: ignore[arg-type]
    recorder = Recorder(server.app)
    server.app = recorder  # type: ignore[assignment]
    running = await serve_app(server)
    try:
        started = time.perf_counter()
        report = await run_suite(SESSION_SUITE, running.url, {"timeout": 5})
        suite_time = time.perf_counter() - started
        calls = list(recorder.calls)
        started = time.perf_counter()
        ids: dict[str, str] = {}
        async with httpx.AsyncClient(timeout=10) as client:
            for method, path, body, created in calls:
                for old, new in ids.items():
                    path = path.replace(old, new)
                response = await client.request(method, running.url + path, content=body or None)
                if created:
                    ids[json.loads(created)["session_id"]] = response.json()["session_id"]
        return suite_time, time.perf_counter() - started, len(calls), str(report.outcome())
    finally:
        await running.close()


def session_half(rounds: int) -> None:
    for tree in ("v1", "v2"):
        results = [asyncio.run(session_round(tree)) for _ in range(rounds)]
        suite_median = statistics.median(r[0] for r in results)
        bare_median = statistics.median(r[1] for r in results)
        print(f"session-server suite ({tree}): {results[-1][2]} HTTP calls per run, outcome {results[-1][3]}")
        print(f"  suite     {suite_median * 1000:8.1f} ms (median of {rounds})")
        print(f"  bare httpx{bare_median * 1000:8.1f} ms (the same calls, serial, unjudged)")
        print(f"  ratio     {suite_median / bare_median:8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    model = Recording()
    suite_times, bare_times = [], []
    with serve_in_thread(make_app(model), ready_path="/v1/models") as base:
        url = base + "/v1"
        for _ in range(args.rounds):
            model.bodies.clear()
            started = time.perf_counter()
            report = asyncio.run(run_suite(SUITE, url, OPTIONS))
            suite_times.append(time.perf_counter() - started)
            bodies = list(model.bodies)
            started = time.perf_counter()
            asyncio.run(bare(url, bodies))
            bare_times.append(time.perf_counter() - started)
    suite_median, bare_median = statistics.median(suite_times), statistics.median(bare_times)
    print(f"openai-chat suite: {len(bodies)} chat calls per run, outcome {report.outcome()}")
    print(f"  suite     {suite_median * 1000:8.1f} ms (median of {args.rounds})")
    print(f"  bare httpx{bare_median * 1000:8.1f} ms (the same calls, serial, unjudged)")
    print(f"  ratio     {suite_median / bare_median:8.2f}x")
    session_half(args.rounds)


if __name__ == "__main__":
    main()
