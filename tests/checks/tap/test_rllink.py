"""RLlink through the tap: the reference server in both dialects passes a client's conversation over two
connections; zoo servers are flagged with their clause where that traffic exercises it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from checks.rllink.codec import HEADER_SIZE, Dialect, encode, lenient_length
from checks.rllink.episodes import batch
from checks.rllink.options import RLlinkOptions
from checks.rllink.reference import ReferenceServer
from checks.tap import rllink as tap_rllink
from checks.tap.kinds import tap_spec
from checks.verdicts import Verdict
from tests.checks.tap.conftest import tapping
from tests.zoo.rllink import faults
from tests.zoo.rllink.catalogue import FRAGMENT, running

QUIET = 0.3  # after a bare EPISODES: long enough for a wrong reply to come before the next request


async def read_frame(reader: asyncio.StreamReader) -> bytes:
    header = await asyncio.wait_for(reader.readexactly(HEADER_SIZE), 5.0)
    return await asyncio.wait_for(reader.readexactly(lenient_length(header, 64 * 1024 * 1024)), 5.0)


async def converse(port: int, dialect: Dialect, connections: int = 2) -> int:
    """A client's conversation per connection; how many replies it read (a broken server may cut it short)."""
    options, replies = RLlinkOptions(), 0
    full = {"type": "EPISODES_AND_GET_STATE", "timesteps": FRAGMENT}
    for connection in range(connections):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        script: list[tuple[list[dict[str, Any]], int]] = [
            ([{"type": "PING"}], 1),
            ([{"type": "GET_CONFIG"}], 1),
            ([{"type": "GET_STATE"}], 1),
            ([{"type": "EPISODES", "episodes": batch(options, dialect, FRAGMENT // 2)}], 0),
            ([{"type": "GET_STATE"}, {"type": "PING"}], 2),
            ([{**full, "episodes": batch(options, dialect, FRAGMENT, seed=connection * 2 + 1)}], 1),
            ([{**full, "episodes": batch(options, dialect, FRAGMENT, seed=connection * 2 + 2)}], 1),
        ]
        try:
            for messages, answers in script:
                writer.write(b"".join(encode(message, dialect) for message in messages))
                await writer.drain()
                for _ in range(answers):
                    await read_frame(reader)
                    replies += 1
                if not answers:
                    await asyncio.sleep(QUIET)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass  # a broken server: the tap has what it needs
        finally:
            writer.close()
    return replies


@pytest.mark.parametrize("dialect", ["msgpack", "json"])
async def test_the_reference_server_passes_through_the_tap(dialect):
    async with running(ReferenceServer, dialect) as server:
        async with tapping(tap_rllink.spec(), f"tcp://127.0.0.1:{server.port}", "tcp") as tapped:
            replies = await converse(int(tapped.url.rsplit(":", 1)[1]), dialect)
    assert replies == 14
    verdicts = tapped.verdicts()
    assert tapped.flagged() == set(), verdicts
    for clause in sorted(tap_rllink.PASSIVE - {"rllink.config.pickle"}):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.ledger.tallies["rllink.seq.monotonic"].judged == 8  # across both connections
    assert tapped.ledger.tallies["rllink.malformed.recovery"].skip_reason == "needs an active run"


FLAGGED: dict[str, tuple[type[ReferenceServer], Dialect, str]] = {
    "acks-episodes": (faults.AcksEpisodes, "json", "rllink.episodes.no-reply"),
    "double-pong": (faults.DoublePong, "json", "rllink.ping.pong"),
    "config-as-str": (faults.ConfigAsStr, "msgpack", "rllink.config.set-config"),
    "steps-as-string": (faults.StepsAsString, "json", "rllink.config.set-config"),
    "empty-module": (faults.EmptyModule, "msgpack", "rllink.state.shape"),
    "counts-down": (faults.CountsDown, "json", "rllink.seq.monotonic"),
    "seq-per-connection": (faults.SeqPerConnection, "msgpack", "rllink.seq.monotonic"),
    "pong-overtakes": (faults.PongOvertakes, "msgpack", "rllink.order.pipelined"),
    "type-as-bin": (faults.TypeAsBin, "msgpack", "rllink.body.form"),
    "trailing-byte": (faults.TrailingByte, "msgpack", "rllink.frame.header"),
    "space-padded-header": (faults.SpacePaddedHeader, "msgpack", "rllink.frame.header"),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
async def test_zoo_servers_are_flagged_through_the_tap(name):
    server_class, dialect, clause = FLAGGED[name]
    async with running(server_class, dialect) as server:
        async with tapping(tap_rllink.spec(), f"tcp://127.0.0.1:{server.port}", "tcp") as tapped:
            await converse(int(tapped.url.rsplit(":", 1)[1]), dialect)
    assert tapped.flagged() == {clause}, [t.to_dict() for t in tapped.ledger.tallies.values() if t.violated]
    assert tapped.ledger.tallies[clause].first is not None


def test_options_pick_the_dialect_and_the_spaces():
    assert tap_spec("rllink", {"dialect": "json", "obs_shape": "[8]"}).catalogue is not None
    with pytest.raises(ValueError, match="takes only"):
        tap_spec("rllink", {"batches": "3"})
