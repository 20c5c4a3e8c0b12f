"""The Join session's deadlines: each await is bounded as under asyncio.timeout, with one timer for all."""

from __future__ import annotations

import asyncio

import pytest

from checks.rlmesh.deadline import Deadlines


def test_an_await_past_its_end_raises_timeout_after_earlier_awaits_ended_in_time() -> None:
    async def scenario() -> float:
        deadlines = Deadlines()
        loop = asyncio.get_running_loop()
        for _ in range(3):  # the timer scheduled by the first await fires early and moves to the last one's end
            with deadlines.within(0.2):
                await asyncio.sleep(0.1)
        started = loop.time()
        with pytest.raises(TimeoutError):
            with deadlines.within(0.15):
                await asyncio.sleep(5)
        return loop.time() - started

    waited = asyncio.run(scenario())
    assert 0.14 <= waited < 1.0


def test_a_shorter_deadline_than_the_scheduled_timer_is_kept() -> None:
    async def scenario() -> float:
        deadlines = Deadlines()
        loop = asyncio.get_running_loop()
        with deadlines.within(30):
            await asyncio.sleep(0)
        started = loop.time()
        with pytest.raises(TimeoutError):
            with deadlines.within(0.1):
                await asyncio.sleep(5)
        return loop.time() - started

    assert asyncio.run(scenario()) < 1.0


def test_a_cancel_from_outside_stays_a_cancel_and_a_late_timer_cancels_nothing() -> None:
    async def scenario() -> str:
        deadlines = Deadlines()

        async def bounded() -> None:
            with deadlines.within(0.05):
                await asyncio.sleep(5)

        task = asyncio.create_task(bounded())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)  # the timer fires with no await running
        with deadlines.within(1):
            await asyncio.sleep(0.01)
        deadlines.stop()
        return "ok"

    assert asyncio.run(scenario()) == "ok"


def test_two_overlapping_awaits_are_refused() -> None:
    async def scenario() -> None:
        deadlines = Deadlines()
        with deadlines.within(1):
            with pytest.raises(RuntimeError):
                with deadlines.within(1):
                    pass  # pragma: no cover

    asyncio.run(scenario())
