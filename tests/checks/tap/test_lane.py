"""The pipe to the judging process: puts never wait, however full the pipe; items arrive whole and in order, a
large payload out of band (not copied into the pickle)."""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time

import pytest

from checks.tap.copies import Copy
from checks.tap.lane import BATCH_SECONDS, CopyLane, frame_of
from checks.tap.wsframes import BINARY, LARGE, Payload, WsMessage

PAYLOAD = 256 * 1024
ITEMS = 24  # 6 MiB: several times what the pipe holds


def copy_of(number: int, payload: bytes) -> Copy:
    message = WsMessage(BINARY, [(Payload(payload), b""), (b"small", b"")], len(payload) + 5)
    return Copy(1, "client", message, message.size, 0.0, number=number)


def test_a_large_payload_goes_out_of_band():
    prefix, header, *buffers = frame_of(copy_of(1, bytes(PAYLOAD)))
    assert header.nbytes < 1024 and [buffer.nbytes for buffer in buffers] == [PAYLOAD]
    assert prefix.nbytes == 8 + 8 and PAYLOAD >= LARGE


async def test_puts_never_wait_and_everything_arrives_in_order():
    lane = CopyLane()
    payloads = [os.urandom(PAYLOAD) for _ in range(ITEMS)]
    started = time.monotonic()
    for number, payload in enumerate(payloads):
        lane.put_nowait(copy_of(number, payload), PAYLOAD)
    assert time.monotonic() - started < 2.0  # nothing read yet: the pipe is full, the rest waits in the lane
    assert lane._watched is asyncio.get_running_loop()
    received: list[Copy] = []
    failure: list[BaseException] = []

    def read() -> None:
        try:
            while len(received) < ITEMS:
                received.append(lane.get(timeout=10))
        except (queue.Empty, OSError) as exc:
            failure.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    while reader.is_alive():
        await asyncio.sleep(0.01)  # the loop flushes the lane as the pipe drains
    assert failure == []
    assert [item.number for item in received] == list(range(ITEMS))
    assert all(item.item.payload() == payload + b"small" for item, payload in zip(received, payloads, strict=True))
    assert lane._watched is None  # nothing pending: the loop no longer watches the pipe
    lane.close()
    lane.put_nowait(copy_of(ITEMS, b"late"))  # after the close: dropped, never raised into the relay


def test_get_says_empty_when_nothing_came():
    lane = CopyLane()
    with pytest.raises(queue.Empty):
        lane.get(timeout=0.05)
    lane.close()


async def test_copies_of_small_messages_go_out_together_soon_and_before_what_is_put_after_them():
    lane = CopyLane()
    for number in range(100):
        lane.put_nowait(copy_of(number, b"tiny"), 4)
    assert len(lane._batch) == 100 and not lane._pending  # nothing framed yet: the timer sends them together
    with pytest.raises(queue.Empty):
        lane.get(timeout=0)
    await asyncio.sleep(BATCH_SECONDS * 5)
    assert lane._batch == []
    lane.put_nowait(copy_of(100, b"next"), 4)
    lane.put("final")  # waits for nothing: framed after the batch it follows
    taken = [lane.get(timeout=1) for _ in range(102)]
    assert [item.number for item in taken[:101]] == list(range(101)) and taken[101] == "final"
    lane.close()
    await asyncio.sleep(BATCH_SECONDS * 2)  # a timer firing after the close writes nothing


def test_without_an_event_loop_a_put_is_sent_at_once():
    lane = CopyLane()
    lane.put_nowait(copy_of(1, b"tiny"), 4)
    assert lane.get(timeout=1).number == 1
    lane.close()
