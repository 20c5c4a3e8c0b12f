"""The rllink suite closes the connection its phases share when the run ends, and the transcript shows it."""

from __future__ import annotations

import asyncio
import dataclasses

from checks.core import run_suite
from checks.rllink.options import RLlinkState
from checks.rllink.reference import start_reference_server
from checks.rllink.suite import SUITE

FAST = {"timeout": 2.0, "recycle_wait": 0.3, "quiet": 0.15, "second_client_wait": 0.5, "batches": 2}


def _kept_alive(states: list[RLlinkState]):
    """The suite, its run states kept referenced: an unreferenced connection would be closed by the collector."""

    def new_state() -> RLlinkState:
        states.append(RLlinkState())
        return states[-1]

    return dataclasses.replace(SUITE, new_state=new_state)


async def _drained(server, seconds: float = 3.0) -> bool:
    """Whether the server's handlers have all seen their connection end within `seconds`."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while server.connections and loop.time() < end:
        await asyncio.sleep(0.02)
    return not server.connections


async def test_full_run_leaves_the_reference_server_no_connection():
    server = await start_reference_server("127.0.0.1", 0, dialect="msgpack", fragment_length=32, recycle=0.1)
    try:
        states: list[RLlinkState] = []
        report = await run_suite(_kept_alive(states), server.url, FAST, include_optional=True)
        assert states and states[0].link is None
        assert await _drained(server), f"the server still holds {len(server.connections)} connection(s)"
    finally:
        await server.close()
    closes = [t for t in report.transcripts.values() if t.closed_by == "checker"]
    assert closes, "no transcript records the checker's closing of the shared connection"
    assert any("end of the run" in (t.close_reason or "") for t in closes)


async def test_a_run_stopped_early_still_closes_its_connection():
    server = await start_reference_server("127.0.0.1", 0, dialect="json", fragment_length=32, recycle=0.1)
    try:
        states: list[RLlinkState] = []
        await run_suite(_kept_alive(states), server.url, FAST, phases=["handshake"])
        assert await _drained(server), f"the server still holds {len(server.connections)} connection(s)"
    finally:
        await server.close()
