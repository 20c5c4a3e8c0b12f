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


def assert_pickled_array_refused(evil: bytes, shape: list[int]) -> None:
    """A SET_STATE whose state is an object array holding the pickle `evil` is refused at decoding."""
    body = msgpack.packb(
        {"type": "SET_STATE", "state": {b"nd": True, b"type": b"|O", b"kind": b"O", b"shape": shape, b"data": evil}},
        use_bin_type=True,
    )
    with pytest.raises(codec.PickleRefused):
        codec.decode_body(body, "msgpack")


def test_pickled_array_is_refused_and_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    assert_pickled_array_refused(pickle.dumps(_CreatesFile(str(marker))), [1])
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


def _frame_bytes(body: bytes) -> np.ndarray:
    return np.frombuffer(body, np.uint8)


def test_a_large_array_is_a_read_only_view_of_the_body():
    observation = np.arange(3 * 512 * 512 * 3, dtype=np.uint64).astype(np.uint8).reshape(3, 512, 512, 3)
    small = np.arange(4, dtype=np.float32)
    body = codec.encode({"type": "SET_STATE", "state": {"rl_module": {"obs": observation, "b": small}}}, "msgpack")[8:]
    module = codec.decode_body(body, "msgpack")["state"]["rl_module"]
    assert np.array_equal(module["obs"], observation) and np.array_equal(module["b"], small)
    assert np.shares_memory(module["obs"], _frame_bytes(body))  # not copied
    assert not module["obs"].flags.writeable and not module["b"].flags.writeable


@pytest.mark.parametrize("pad", range(4))
def test_an_unaligned_large_array_is_copied_once_aligned(pad):
    weights = np.linspace(0, 1, 70_000, dtype=np.float32)  # 280 KB
    body = codec.encode({"type": "SET_STATE", "p" * (pad + 1): 1, "w": weights}, "msgpack")[8:]
    decoded = codec.decode_body(body, "msgpack")["w"]
    assert np.array_equal(decoded, weights)
    assert decoded.flags.aligned and not decoded.flags.writeable


def test_a_large_bin_no_array_takes_stays_bytes():
    blob = os.urandom(200_000)
    message = codec.decode_body(
        codec.encode({"type": "SET_CONFIG", "config": blob, "more": [blob]}, "msgpack")[8:], "msgpack"
    )
    assert type(message["config"]) is bytes and message["config"] == blob
    assert type(message["more"][0]) is bytes and message["more"][0] == blob


def test_a_large_pickled_array_is_refused_and_never_executed(tmp_path):
    marker = tmp_path / "pwned"
    assert_pickled_array_refused(pickle.dumps([_CreatesFile(str(marker)), b"x" * 100_000]), [2])
    assert not marker.exists()


def test_a_target_ext_type_in_a_large_body_is_refused():
    body = msgpack.packb({"type": "SET_STATE", "blob": b"x" * 100_000}, use_bin_type=True)
    ext = msgpack.packb(msgpack.ExtType(0x62, b"\x00\x00\x00\x00"))
    body = body[:1].replace(b"\x82", b"\x83") + body[1:] + msgpack.packb("e") + ext
    with pytest.raises(codec.Undecodable):
        codec.decode_body(body, "msgpack")


def test_encoding_a_large_array_writes_what_msgpack_numpy_writes():
    weights = np.linspace(0, 1, 70_000, dtype=np.float32).reshape(700, 100)
    message = {"type": "SET_STATE", "state": {"rl_module": {"w": weights.T, "b": weights[0]}, "weights_seq_no": 3}}
    plain = codec.frame(msgpack.packb(message, default=msgpack_numpy.encode, use_bin_type=True))
    assert codec.encode(message, "msgpack") == plain
    assert np.array_equal(codec.decode_body(plain[8:], "msgpack")["state"]["rl_module"]["w"], weights.T)
