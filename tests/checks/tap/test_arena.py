"""Large WebSocket payloads reach the judges in shared memory: gathered into a slot by the relay's reader, named
in the copy (a few bytes through the pipe), read there by the judging process and the slot freed once judged;
freed too when the copy is dropped or the stream ends inside the frame; with every slot busy, or a payload
bigger than a slot, the bytes go through the pipe as before."""

from __future__ import annotations

import multiprocessing
import os
import pickle
from typing import Any

import numpy as np
import pytest

from checks.plugrl.reference import start_reference_server
from checks.plugrl_client.reference import ReferenceClient
from checks.tap.arena import Arena, SlotPayload
from checks.tap.judging_process import ProcessQueue
from checks.tap.kinds import tap_spec
from checks.tap.relay import Relay
from checks.tap.wsframes import LARGE, FrameReader, Payload, WsMessage
from tests.checks.tap.conftest import tapping
from tests.checks.tap.test_bytes import ws_frame
from tests.checks.tap.test_readers import HEAD, feed_in_pieces

CAMERA = (512, 512, 3)  # per env: with 3 envs an infer message of 2.25 MiB


class CameraClient(ReferenceClient):
    """The reference client with a camera image per env in every infer message."""

    cameras = 0  # infer messages sent with their images

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        self.cameras += 1
        message = super().infer_message(envs)
        rows = len(message["data"]["states"]["t"])
        message["data"]["images"] = {"cam": np.full((rows, *CAMERA), 7, dtype=np.uint8)}
        return message


def arena(slots: int = 2, slot_size: int = 4 * LARGE) -> Arena:
    return Arena(multiprocessing.get_context("fork"), slots, slot_size)


def test_a_large_payload_is_gathered_into_a_slot_and_read_back_whole_from_it():
    shared = arena()
    key = os.urandom(4)
    big = os.urandom(3 * LARGE)
    reader = FrameReader(arena=shared)
    found = feed_in_pieces(reader, HEAD + ws_frame(big, key=key) + ws_frame(b"small", key=key), 10_000)
    message, small = (item for item in found if isinstance(item, WsMessage))
    assert isinstance(message.parts[0][0], SlotPayload) and message.slots == [0] and not small.slots
    pickled = pickle.dumps(message, protocol=5)
    assert len(pickled) < 1000  # the slot's name, not its bytes
    shared.attach()
    judged = pickle.loads(pickled)
    assert judged.payload() == big and small.payload() == b"small"
    assert shared.in_use() == 1
    shared.free(judged.slots)
    assert shared.in_use() == 0


def test_with_every_slot_busy_or_a_payload_too_big_the_bytes_travel_in_the_copy():
    shared = arena(slots=1)
    reader = FrameReader(arena=shared)
    first, second = os.urandom(2 * LARGE), os.urandom(2 * LARGE)
    too_big = os.urandom(5 * LARGE)
    found = reader.feed(HEAD + ws_frame(first) + ws_frame(second) + ws_frame(too_big))
    messages = [item for item in found if isinstance(item, WsMessage)]
    assert [m.slots for m in messages] == [[0], [], []]
    assert isinstance(messages[1].parts[0][0], Payload) and isinstance(messages[2].parts[0][0], Payload)
    assert pickle.loads(pickle.dumps(messages[1], protocol=5)).payload() == second
    shared.free(messages[0].slots)
    again = reader.feed(ws_frame(second))
    assert isinstance(again[0], WsMessage) and again[0].slots == [0]  # the freed slot is taken again


def test_a_stream_that_ends_inside_a_frame_or_a_message_gives_its_slots_back():
    shared = arena()
    reader = FrameReader(arena=shared)
    fragment = ws_frame(os.urandom(2 * LARGE), fin=False)
    assert reader.feed(HEAD + fragment + ws_frame(os.urandom(2 * LARGE), opcode=0)[:LARGE]) == [reader.head]
    assert shared.in_use() == 2  # the whole first fragment, and the second one arriving
    assert reader.end() == []
    assert shared.in_use() == 0


def test_a_copy_the_queue_drops_gives_its_slot_back():
    queue = ProcessQueue(max_items=0)  # full from the start: every copy is dropped
    relay = Relay(("127.0.0.1", 9), lambda: (FrameReader(), FrameReader()), queue)
    slot = queue.arena.claim(LARGE)
    assert slot is not None and queue.arena.in_use() == 1
    relay._offer(1, "client", WsMessage(2, [(slot, b"")], LARGE, slots=[slot.slot]), LARGE)
    assert relay.stats.unjudged == 1 and queue.arena.in_use() == 0


@pytest.mark.parametrize("start", ["fork", "spawn"])
async def test_camera_frames_are_judged_from_shared_memory_and_every_slot_comes_back(start):
    server = await start_reference_server("127.0.0.1", 0, stop_after=8)
    queue = ProcessQueue(start=start)
    try:
        async with tapping(tap_spec("plugrl", {}), server.url, queue=queue) as tapped:
            client = CameraClient(tapped.url)
            assert await client.session() == "stop"
    finally:
        await server.close()
    ledger = tapped.ledger
    assert ledger.messages >= 16 and ledger.judged_messages == ledger.messages, ledger.to_dict()
    assert tapped.flagged() == set(), tapped.verdicts()
    assert client.cameras >= 4 and queue.arena.claimed == client.cameras  # every infer message went through a slot
    assert queue.arena.in_use() == 0
