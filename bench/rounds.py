"""What the suite benches share: timings taken in interleaved rounds, and the `--rounds` command line."""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


async def interleaved_medians(rounds: int, *timers: Callable[[], Awaitable[float]]) -> list[float]:
    """Each timer's median seconds over `rounds` rounds; a round runs every timer once, in turn, so all of
    them see the same machine load."""
    samples: list[list[float]] = [[] for _ in timers]
    for _ in range(rounds):
        for sample, timer in zip(samples, timers, strict=True):
            sample.append(await timer())
    return [statistics.median(sample) for sample in samples]


async def timed_against(server: Any, run: Callable[[Any], Awaitable[T]]) -> tuple[float, T]:
    """Seconds `run(server)` took against a started reference server, and what it returned; the server is
    closed after, whatever happens."""
    try:
        started = time.perf_counter()
        result = await run(server)
        return time.perf_counter() - started, result
    finally:
        await server.close()


def run_with_rounds(main: Callable[[int], Coroutine[Any, Any, None]], doc: str, default: int) -> None:
    """`main(rounds)` with `--rounds` from the command line; the help says the first line of `doc`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=default)
    asyncio.run(main(parser.parse_args().rounds))
