"""The cost of the openai-chat suite against bare httpx making the same calls to the same endpoint.

Serves the suite's reference endpoint on a free 127.0.0.1 port, runs the whole
suite while recording every request it sends, then replays those requests
with a bare httpx client (same bodies, same order, streams read to the end,
nothing judged). Prints the median of each over several rounds and their ratio.
The session-server half (the same against a session's proxy) is added by the
session-server suite.

    python bench/session_suite.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
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


if __name__ == "__main__":
    main()
