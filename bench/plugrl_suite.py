"""How fast the plugrl-server suite and the PlugRL codec are, as ratios measured side by side.

    python bench/plugrl_suite.py [--rounds 5]

(a) Wall time of the phases the seed checker also runs (exchange, errors,
    scoping, reuse, stop) against the reference server, beside the seed
    checker's 3.0 s on this machine and beside a bare client that sends the
    same frames on the same connections without checking anything.
(b) Codec encode+decode of a 3x512x512x3 uint8 observation beside a plain
    copy of the same bytes.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rounds import interleaved_medians, run_with_rounds, timed_against  # noqa: E402
from checks.core import run_suite  # noqa: E402
from checks.plugrl.codec import pack, unpack  # noqa: E402
from checks.plugrl.messages import (  # noqa: E402
    FAULTS,  # noqa: E402
    feedback_message,
    infer_message,
)
from checks.plugrl.reference import start_reference_server  # noqa: E402
from checks.plugrl.suite import SUITE  # noqa: E402

SEED_SECONDS = 3.0  # the seed checker against a conforming server, measured on this machine
SEED_PHASES = ["exchange", "errors", "scoping", "reuse", "stop"]
STOP_AFTER = 200
OPTIONS = {"timeout": 10.0}


async def timed_suite() -> float:
    elapsed, report = await timed_against(
        await start_reference_server(stop_after=STOP_AFTER),
        lambda server: run_suite(SUITE, server.url, OPTIONS, SEED_PHASES, include_optional=True),
    )
    if report.outcome() != "pass":
        raise SystemExit(f"the suite did not pass against the reference server: {report.counts()}")
    return elapsed


class Bare:
    """A connection that sends and receives frames and checks nothing."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __aenter__(self) -> Bare:
        self.ws = await connect(self.url, compression=None, max_size=None)
        await self.ws.recv()  # metadata
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ws.close()

    async def infer(self, envs: list[int], **kwargs) -> None:
        await self.ws.send(pack(infer_message(OPTIONS_MODEL, envs, **kwargs)))
        unpack(await self.ws.recv())

    async def feedback(self, envs: list[int], done: list[bool] | None = None) -> None:
        await self.ws.send(pack(feedback_message(OPTIONS_MODEL, envs, done)))

    async def cycle(self, envs: list[int]) -> None:
        await self.infer(envs)
        await self.feedback(envs)

    async def until_closed(self) -> None:
        try:
            while True:
                await self.ws.recv()
        except ConnectionClosed:
            pass


OPTIONS_MODEL = SUITE.parse_options(OPTIONS)


async def bare_run(url: str) -> None:
    """The frames the seed-equivalent phases send, on the same connections, unchecked."""
    async with Bare(url):
        pass
    async with Bare(url) as c:  # exchange
        await c.cycle([0, 1, 2])
        await c.cycle([0, 1, 2])
        await c.cycle([0])
        await c.infer([0, 1, 2])
        await c.feedback([1, 2])
        await c.infer([2, 1])
        await c.feedback([0, 2, 1])
        for _ in range(OPTIONS_MODEL.exchanges):
            await c.cycle([0, 1, 2])
        await c.infer([0, 1, 2], big=True)
        await c.feedback([0, 1, 2])
    async with Bare(url) as bystander:  # errors
        for _, _, after_infer, fault in FAULTS:
            async with Bare(url) as faulty:
                if after_infer:
                    await asyncio.gather(faulty.infer([0, 1]), bystander.infer([0]))
                    await bystander.feedback([0])
                await faulty.ws.send(fault(OPTIONS_MODEL))
                await asyncio.gather(faulty.until_closed(), bystander.cycle([0]))
            await bystander.cycle([0])
            async with Bare(url):
                pass
    async with Bare(url) as a, Bare(url) as b:  # scoping
        for _ in range(3):
            await asyncio.gather(a.infer([0, 1]), b.infer([0]))
            await asyncio.gather(a.feedback([0, 1]), b.feedback([0]))
    async with Bare(url) as holder:  # reuse
        await holder.cycle([0, 1])
        await holder.infer([0, 1], reuse=[True, False])
        await holder.feedback([0, 1])
        await holder.infer([1, 0], reuse=[True, True])
        await holder.feedback([1, 0], done=[False, True])
        for env in (1, 7):
            async with Bare(url) as other:
                await other.ws.send(pack(infer_message(OPTIONS_MODEL, [env], reuse=[True])))
                await asyncio.gather(holder.infer([1], reuse=[True]), other.until_closed())
            await holder.feedback([1])
        await holder.ws.send(pack(infer_message(OPTIONS_MODEL, [0, 1], reuse=[True, False])))
        await holder.until_closed()
    async with Bare(url) as c:  # stop
        try:
            for count in range(OPTIONS_MODEL.max_exchanges):
                await c.infer([0, 1, 2])
                await c.feedback([0, 1, 2], [count % 5 == 4] * 3)
        except ConnectionClosed:
            pass


async def timed_bare() -> float:
    elapsed, _ = await timed_against(await start_reference_server(stop_after=STOP_AFTER), lambda s: bare_run(s.url))
    return elapsed


def codec_ratio(rounds: int, loops: int = 20) -> tuple[float, float]:
    """Median seconds per encode+decode of the observation, and per plain copy of its bytes."""
    images = np.random.default_rng(0).integers(0, 255, (3, 512, 512, 3), dtype=np.uint8)
    message = {"message_type": "infer", "data": {"images": {"cam": images}, "states": {}, "text": []}}
    raw = images.tobytes()
    decoded = unpack(pack(message))["data"]["images"]["cam"]
    assert np.array_equal(decoded, images)
    codec_times, copy_times = [], []
    for _ in range(rounds):  # interleaved, so both see the same machine load
        started = time.perf_counter()
        for _ in range(loops):
            unpack(pack(message))
        codec_times.append((time.perf_counter() - started) / loops)
        started = time.perf_counter()
        for _ in range(loops):
            bytearray(raw)  # one copy of the same bytes
        copy_times.append((time.perf_counter() - started) / loops)
    return statistics.median(codec_times), statistics.median(copy_times)


async def main(rounds: int) -> None:
    suite, bare = await interleaved_medians(rounds, timed_suite, timed_bare)
    print(f"(a) seed-equivalent phases ({', '.join(SEED_PHASES)}) against the reference server, median of {rounds}:")
    print(f"    rlconform suite   {suite:.3f} s")
    print(f"    seed checker      {SEED_SECONDS:.3f} s (its figure)   suite/seed = {suite / SEED_SECONDS:.3f}")
    print(f"    bare client       {bare:.3f} s (same frames, no checks)   suite/bare = {suite / bare:.2f}")
    codec, copy = codec_ratio(max(rounds, 5))
    size = 3 * 512 * 512 * 3
    print(f"(b) codec encode+decode of a 3x512x512x3 uint8 observation ({size / 2**20:.2f} MiB):")
    print(
        f"    codec {codec * 1e3:.2f} ms ({size / codec / 2**30:.2f} GiB/s), "
        f"plain copy {copy * 1e3:.2f} ms ({size / copy / 2**30:.2f} GiB/s)   codec/copy = {codec / copy:.2f}"
    )


if __name__ == "__main__":
    run_with_rounds(main, __doc__, default=5)
