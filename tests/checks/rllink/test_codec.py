"""The codec is strict and bounded, and no target data is ever unpickled."""

from __future__ import annotations

import os
import pickle

import msgpack
import msgpack_numpy
import numpy as np
import pytest

from checks.rllink import codec
from checks.rllink.pickle_scan import scan


class _CreatesFile:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):  # executing this pickle would create the file
        return (open, (self.path, "w"))


def test_pickled_array_is_refused_and_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_CreatesFile(str(marker)))
    body = msgpack.packb(
        {"type": "SET_STATE", "state": {b"nd": True, b"type": b"|O", b"kind": b"O", b"shape": [1], b"data": evil}},
        use_bin_type=True,
    )
    with pytest.raises(codec.PickleRefused):
        codec.decode_body(body, "msgpack")
    assert not marker.exists()


def test_config_pickle_is_scanned_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    blob = pickle.dumps({"rollout_fragment_length": 128, "trap": _CreatesFile(str(marker))})
    facts = scan(blob)
    assert facts.fragment_length()[0] == 128
    assert not marker.exists() and not os.path.exists(marker)


def test_arrays_round_trip_and_mis_sized_ones_are_marked():
    good = msgpack.packb({"type": "SET_STATE", "a": np.ones((2, 3), np.float32)}, default=msgpack_numpy.encode)
    assert codec.decode_body(good, "msgpack")["a"].shape == (2, 3)
    short = msgpack.packb(
        {"type": "SET_STATE", "a": {b"nd": True, b"type": b"<f4", b"kind": b"", b"shape": [4], b"data": b"\0" * 8}},
        use_bin_type=True,
    )
    assert isinstance(codec.decode_body(short, "msgpack")["a"], codec.BadArray)


@pytest.mark.parametrize("header", [b"     +11", b"0000_011", b"GARBAGE!", b"-0000001"])
def test_strict_header_refuses_what_only_int_reads(header):
    with pytest.raises(codec.HeaderError):
        codec.strict_length(header, 1 << 20)


def test_frame_cap_and_body_form():
    with pytest.raises(codec.FrameTooLarge):
        codec.strict_length(b"99999999", 1024)
    with pytest.raises(codec.NotAMessage):
        codec.decode_body(b'["PING"]', "json")
    with pytest.raises(codec.Undecodable):
        codec.decode_body(msgpack.packb({"type": "PING"}) + b"\x00", "msgpack")
    assert codec.frame(b'{"type": "PING"}') == b'00000016{"type": "PING"}'
