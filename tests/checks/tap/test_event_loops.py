"""The relay under uvloop, the loop uvicorn runs a hosted tap on, as under asyncio's own.

uvloop may hand over a client's first bytes before the upstream has answered, though reading was
paused in `connection_made`; the relay keeps them and forwards them first once paired."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.tap.copies import CopyQueue
from checks.tap.kinds import tap_spec
from checks.tap.run import TapRun

uvloop = pytest.importorskip("uvloop")


async def reference_pair_through_a_tap() -> tuple[Any, Any]:
    server = await start_reference_server(stop_after=12)
    try:
        tap = TapRun(tap_spec("plugrl-server", {}), f"ws://127.0.0.1:{server.port}", queue=CopyQueue())
        bound = await tap.start("127.0.0.1", 0)
        await asyncio.wait_for(ReferenceClient(f"ws://127.0.0.1:{bound}").session(), 20)
        windows = await tap.stop()
        return tap.relay.stats, windows[-1]
    finally:
        await server.stop()


RUNNERS: dict[str, Callable[[Coroutine[Any, Any, Any]], Any]] = {"asyncio": asyncio.run, "uvloop": uvloop.run}


@pytest.mark.parametrize("loop", sorted(RUNNERS))
def test_the_reference_pair_passes_through_the_tap_on_either_event_loop(loop: str) -> None:
    stats, window = RUNNERS[loop](reference_pair_through_a_tap())
    assert stats.connections == 1 and stats.reader_faults == []
    assert stats.bytes_up > 1000 and stats.bytes_down > 500  # the handshake and every infer went both ways
    decided = {t.clause_id: str(t.verdict()) for t in window.tallies.values() if t.judged}
    assert decided.get("plugrl.5.3.time-major") == "pass" and set(decided.values()) == {"pass"}, decided
