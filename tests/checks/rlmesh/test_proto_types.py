"""Our rlmesh-wire-v1 messages use upstream's field types (issue 19 item 9): what a peer sends decodes alike."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor

from checks.rlmesh.proto import env_pb2


@pytest.mark.parametrize("name", ["step_count", "start_timestamp_ns", "end_timestamp_ns"])
def test_episode_metadata_counts_and_times_are_int64_as_upstream(name):
    assert env_pb2.EpisodeMetadata.DESCRIPTOR.fields_by_name[name].type == FieldDescriptor.TYPE_INT64


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 on the wire: two's complement in ten bytes when negative
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def test_a_negative_int64_timestamp_decodes_as_the_number_the_peer_sent():
    """A peer's int64 -5 is -5 to us, not 2**64 - 5: `start <= end` is judged on the peer's values."""
    wire = bytes([8 << 3]) + varint(-5) + bytes([9 << 3]) + varint(3) + bytes([4 << 3]) + varint(7)
    episode = env_pb2.EpisodeMetadata.FromString(wire)
    assert (episode.start_timestamp_ns, episode.end_timestamp_ns, episode.step_count) == (-5, 3, 7)
    assert episode.start_timestamp_ns <= episode.end_timestamp_ns
