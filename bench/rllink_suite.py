"""How long the rllink suite takes beside a bare client doing the same exchanges, in both dialects.

    python bench/rllink_suite.py [--rounds 3]

Both run against the reference server (fragment length 64, 0.1 s recycle),
every phase including the opt-in destructive one. The suite runs with short
windows (recycle_wait 0.3 s, quiet 0.15 s, second_client_wait 0.5 s); the bare
client sends the same frames in the same writes on the same kind of
connections and reads the same replies, but checks nothing and waits for no
silence: after a frame that makes the server close, it reads to the server's
close, as the suite does, and reconnects as soon as the server listens again
(tried every 10 ms). The ratio is what observing costs: the silence windows,
the back-offs, the checks and the transcripts.
"""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.rounds import interleaved_medians, run_with_rounds, timed_against  # noqa: E402
from checks.core import run_suite  # noqa: E402
from checks.rllink.codec import HEADER_SIZE, Dialect, decode_body, encode  # noqa: E402
from checks.rllink.episodes import batch, broken_episodes  # noqa: E402
from checks.rllink.options import RLlinkOptions  # noqa: E402
from checks.rllink.phase_malformed import malformed_frames  # noqa: E402
from checks.rllink.reference import start_reference_server  # noqa: E402
from checks.rllink.suite import SUITE  # noqa: E402

FRAGMENT = 64
RECYCLE = 0.1
OPTIONS: dict[str, Any] = {"timeout": 5.0, "recycle_wait": 0.3, "quiet": 0.15, "second_client_wait": 0.5}
OPTIONS_MODEL = RLlinkOptions.model_validate(OPTIONS)
PING_PATIENCE = 0.2  # a connection that landed in the closing listener's backlog is never answered
RETRY = 0.01
CLOSE_PATIENCE = 5.0


async def timed_suite(dialect: Dialect) -> float:
    elapsed, report = await timed_against(
        await start_reference_server(dialect=dialect, fragment_length=FRAGMENT, recycle=RECYCLE),
        lambda server: run_suite(SUITE, server.url, {**OPTIONS, "dialect": dialect}, include_optional=True),
    )
    if report.outcome() != "pass":
        raise SystemExit(f"the suite did not pass against the {dialect} reference server: {report.counts()}")
    return elapsed


class Bare:
    """One connection that sends frames and reads replies, checking nothing."""

    def __init__(self, port: int, dialect: Dialect) -> None:
        self.port, self.dialect = port, dialect

    async def open(self) -> Bare:
        """Connected, retried while the server recycles (refused, reset, or stuck in the old listener's backlog)."""
        while True:
            try:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
                await asyncio.wait_for(self.ask({"type": "PING"}), PING_PATIENCE)
                return self
            except (OSError, asyncio.IncompleteReadError):  # TimeoutError is an OSError
                await asyncio.sleep(RETRY)

    async def send(self, *messages: dict[str, Any]) -> None:
        self.writer.write(b"".join(encode(m, self.dialect) for m in messages))
        await self.writer.drain()

    async def read(self) -> dict[str, Any]:
        header = await self.reader.readexactly(HEADER_SIZE)
        return decode_body(await self.reader.readexactly(int(header)), self.dialect)

    async def ask(self, *messages: dict[str, Any]) -> None:
        await self.send(*messages)
        for _ in messages:
            await self.read()

    async def raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def until_closed(self) -> None:
        """Read to the server's close (EOF or reset), as the suite reads it before it reconnects."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), CLOSE_PATIENCE):
                pass
        except OSError:  # a reset, or TimeoutError: the bench's own server never keeps it open that long
            pass

    def close(self) -> None:
        self.writer.close()


async def bare_run(port: int, dialect: Dialect) -> None:
    """The suite's exchanges, phase by phase, unchecked."""
    link = await Bare(port, dialect).open()  # handshake
    await link.ask({"type": "GET_CONFIG"})
    await link.ask({"type": "GET_STATE"})
    await link.ask({"type": "GET_STATE"}, {"type": "PING"}, {"type": "GET_CONFIG"})
    await link.ask({"type": "PING"})

    half = FRAGMENT // 2  # batches
    await link.send({"type": "EPISODES", "episodes": batch(OPTIONS_MODEL, dialect, half, seed=1)})
    await link.ask({"type": "PING"})
    rest = {
        "type": "EPISODES_AND_GET_STATE",
        "episodes": batch(OPTIONS_MODEL, dialect, FRAGMENT - half, seed=2),
        "timesteps": FRAGMENT - half,
    }
    await link.ask(rest, {"type": "PING"})
    for round_number in range(1, OPTIONS_MODEL.batches):
        episodes = batch(OPTIONS_MODEL, dialect, FRAGMENT, seed=10 + round_number)
        await link.ask({"type": "EPISODES_AND_GET_STATE", "episodes": episodes, "timesteps": FRAGMENT})

    for index, (_, data) in enumerate(malformed_frames(dialect)):  # malformed: each closes the connection
        await link.raw(data)
        await link.until_closed()
        link.close()
        link = await Bare(port, dialect).open()
        if index == 0:
            await link.ask({"type": "GET_STATE"})

    for kind in ("GET_ACTION", "PONG", "LOG_RETURNS"):  # tolerance: one write each, as the suite sends them
        await link.send({"type": kind})
    await link.ask({"type": "PING"})
    body = encode({"type": "PING"}, dialect)[HEADER_SIZE:]
    digits = str(len(body)).zfill(7)
    for header in (f"{'+' + str(len(body)):>8}", f"{digits[:4]}_{digits[4:]}"):
        await link.raw(header.encode() + body)
        await link.read()

    second = await Bare(port, dialect).open()  # second-client
    second.close()
    await link.ask({"type": "PING"})
    link.close()
    link = await Bare(port, dialect).open()

    short = max(1, FRAGMENT // 4)  # destructive: each bad EPISODES closes the connection
    for _, message in broken_episodes(OPTIONS_MODEL, dialect):
        await link.send(message)
        await link.until_closed()
        link.close()
        link = await Bare(port, dialect).open()
    # The short batch gets its SET_STATE and the connection goes on: the suite's next PING finds it answering.
    short_batch = batch(OPTIONS_MODEL, dialect, short, seed=5)
    await link.ask({"type": "EPISODES_AND_GET_STATE", "episodes": short_batch, "timesteps": short})
    await link.ask({"type": "PING"})
    link.close()


async def timed_bare(dialect: Dialect) -> float:
    server = await start_reference_server(dialect=dialect, fragment_length=FRAGMENT, recycle=RECYCLE)
    elapsed, _ = await timed_against(server, lambda s: bare_run(s.port, dialect))
    return elapsed


async def main(rounds: int) -> None:
    print(f"rllink suite, every phase, against the reference server (fragment {FRAGMENT}, recycle {RECYCLE} s):")
    for dialect in ("msgpack", "json"):
        suite, bare = await interleaved_medians(rounds, partial(timed_suite, dialect), partial(timed_bare, dialect))
        print(
            f"  {dialect:8} suite {suite:6.2f} s   bare client {bare:6.2f} s   "
            f"suite/bare = {suite / bare:.2f}   (median of {rounds})"
        )


if __name__ == "__main__":
    run_with_rounds(main, __doc__, default=3)
