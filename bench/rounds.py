"""What the suite benches share: timings taken in interleaved rounds, and the `--rounds` command line."""

from __future__ import annotations

import argparse
import asyncio
import statistics
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any


async def interleaved_medians(rounds: int, *timers: Callable[[], Awaitable[float]]) -> list[float]:
    """Each timer's median seconds over `rounds` rounds; a round runs every timer once, in turn, so all of
    them see the same machine load."""
    samples: list[list[float]] = [[] for _ in timers]
    for _ in range(rounds):
        for sample, timer in zip(samples, timers, strict=True):
            sample.append(await timer())
    return [statistics.median(sample) for sample in samples]


def run_with_rounds(main: Callable[[int], Coroutine[Any, Any, None]], doc: str, default: int) -> None:
    """`main(rounds)` with `--rounds` from the command line; the help says the first line of `doc`."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=default)
    asyncio.run(main(parser.parse_args().rounds))
