"""The PlugRL codec: round trips, every named decoding error, and hostile sizes decoded boundedly."""

from __future__ import annotations

import struct

import msgpack
import numpy as np
import pytest

from checks.plugrl.codec import MAX_DEPTH, MAX_OBJECTS, CodecError, pack, parse_typestr, unpack


def raw(message) -> bytes:
    """Bytes packed by plain msgpack, without the codec's help (for malformed frames)."""
    return msgpack.packb(message, use_bin_type=True)


def ndarray_map(data: bytes, dtype: str, shape: list[int]) -> dict:
    return {b"__ndarray__": True, b"data": data, b"dtype": dtype, b"shape": shape}


@pytest.mark.parametrize(
    "dtype",
    ["<f4", ">f4", "<f8", ">f8", "<f2", "|u1", "<u2", ">u4", "<u8", "|i1", "<i2", ">i4", "<i8", ">i8", "|b1"],
)
def test_arrays_round_trip_in_any_byte_order_and_width(dtype):
    array = (np.arange(24) % 2 if dtype == "|b1" else np.arange(24)).astype(dtype).reshape(2, 3, 4)
    decoded = unpack(pack({"a": array}))["a"]
    assert decoded.dtype.str == np.dtype(dtype).str
    assert decoded.shape == (2, 3, 4)
    assert np.array_equal(decoded, array)


def test_wire_form_uses_bin_keys_and_a_typestr():
    frame = pack({"message_type": "action", "action": np.zeros((2, 1), dtype=">f4")})
    plain = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    assert plain["message_type"] == "action"
    assert plain["action"] == ndarray_map(b"\0" * 8, ">f4", [2, 1])


def test_non_contiguous_arrays_travel_in_c_order():
    array = np.arange(12, dtype="<i8").reshape(3, 4).T
    assert np.array_equal(unpack(pack({"a": array}))["a"], array)


def test_text_arrays_are_fixed_width_utf32():
    text = np.asarray(["pick up the red block", "stack"])
    frame = pack({"t": text})
    plain = msgpack.unpackb(frame, raw=False, strict_map_key=False)["t"]
    assert plain[b"dtype"] == "<U21" and len(plain[b"data"]) == 168
    assert plain[b"data"][:8] == bytes([0x70, 0, 0, 0, 0x69, 0, 0, 0])
    assert unpack(frame)["t"].tolist() == text.tolist()


def test_numpy_scalars_use_the_npgeneric_form():
    frame = pack({"x": np.float32(1.5), "flag": np.bool_(True)})
    plain = msgpack.unpackb(frame, raw=False, strict_map_key=False)
    assert plain["x"] == {b"__npgeneric__": True, b"data": 1.5, b"dtype": "<f4"}
    decoded = unpack(frame)
    assert decoded["x"] == np.float32(1.5) and decoded["x"].dtype == np.float32
    assert decoded["flag"] is np.True_


def test_zero_length_arrays_round_trip():
    decoded = unpack(pack({"a": np.zeros((0, 3), dtype="<f8")}))["a"]
    assert decoded.shape == (0, 3) and decoded.dtype == np.float64


@pytest.mark.parametrize("dtype", ["<c8", "O", "V8"])
def test_packing_refuses_forbidden_kinds(dtype):
    with pytest.raises(CodecError):
        pack({"a": np.zeros(1, dtype=dtype)})


# ---------------------------------------------------------------- named decoding errors


@pytest.mark.parametrize(
    ("frame", "words", "part"),
    [
        (raw({"a": ndarray_map(b"\0" * 7, "<f4", [2])}), "7 bytes; shape [2] of <f4 needs 8", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "<c8", [1])}), "complex arrays (kind 'c') are forbidden", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "|O8", [1])}), "object arrays (kind 'O') are forbidden", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "|V8", [1])}), "structured arrays (kind 'V') are forbidden", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "<M8", [1])}), "kind 'M' is unknown", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "<f3", [2])}), "no 'f' type is 3 wide", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "float32", [2])}), "not a typestr", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, b"<f4", [2])}), "is bin; a typestr is a msgpack str", "array"),
        (raw({"a": ndarray_map(b"\0" * 8, "<f4", [-2])}), "non-negative ints", "array"),
        (raw({"a": ndarray_map("text", "<f4", [1])}), "data is str, not bin", "array"),
        (
            raw({"a": {"__ndarray__": True, "data": b"\0" * 4, "dtype": "<f4", "shape": [1]}}),
            "arrays use str keys",
            "array",
        ),
        (
            raw({"a": {b"nd": True, b"type": "<f4", b"kind": b"", b"shape": [1], b"data": b"\0" * 4}}),
            "arrays in the msgpack-numpy dialect",
            "array",
        ),
        (
            msgpack.packb({"a": {"nd": True, "type": "<f4", "kind": "", "shape": [1], "data": b"\0" * 4}}),
            "arrays in the msgpack-numpy dialect",
            "array",
        ),
        (raw({"a": {b"__npgeneric__": True, b"data": "one", b"dtype": "<f4"}}), "not a number", "array"),
        (raw([1, 2, 3]), "the top level is an array, not a map", "message"),
        (raw("metadata"), "the top level is a str, not a map", "message"),
        (b"\xc1", "byte 0xc1 at offset 0 starts no object", "message"),
        (b"", "empty frame", "message"),
        (raw({"a": 1}) + b"\0", "1 bytes follow the message", "message"),
        (raw({"a": 1})[:-1], "ends inside a message", "message"),
        (b"\x81\xa1a\xd4\x01\x00", "extension types", "message"),
        (b"\x81\xa1a\xa2\xff\xfe", "not decodable msgpack", "message"),
    ],
)
def test_decoding_errors_name_what_is_wrong(frame, words, part):
    with pytest.raises(CodecError) as caught:
        unpack(frame)
    assert words in str(caught.value)
    assert caught.value.part == part


def test_typestrs_are_parsed_strictly():
    assert parse_typestr(">f8") == np.dtype(">f8")
    assert parse_typestr("<U7").itemsize == 28
    with pytest.raises(CodecError):
        parse_typestr("<f16")


# ---------------------------------------------------------------- hostile sizes


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (b"\x81\xa1a\xc6\xff\xff\xff\xff", "a bin claims 4294967295 bytes but only 0 follow"),
        (b"\x81\xa1a\xdb\xff\xff\xff\xff" + b"x" * 10, "a str claims 4294967295 bytes"),
        (b"\xdf\x00\x98\x96\x80" + b"\0" * 64, "a map claims 20000000 items"),
        (b"\x81\xa1a\xdd\xff\xff\xff\xff", "an array claims"),
        (b"\x81\xa1a" + b"\x91" * 100_000 + b"\0", f"nests deeper than {MAX_DEPTH}"),
        (raw({"a": ndarray_map(b"\0" * 8, "<f8", [100000, 100000])}), "needs 80000000000"),
        (raw({"a": ndarray_map(b"\0" * 8, "<f8", [2**40, 2**40, 2**40])}), "needs"),
    ],
)
def test_hostile_headers_are_refused_before_anything_is_allocated(frame, words):
    with pytest.raises(CodecError) as caught:
        unpack(frame)
    assert words in str(caught.value)


def test_many_small_objects_are_refused_by_count():
    # A map with more entries than a message ever has, each one byte long.
    count = MAX_OBJECTS
    frame = b"\x81\xa1a\xdd" + struct.pack(">I", count) + b"\0" * count
    with pytest.raises(CodecError) as caught:
        unpack(frame)
    assert f"more than {MAX_OBJECTS} msgpack objects" in str(caught.value)


def test_frames_over_the_cap_are_refused():
    frame = raw({"a": b"\0" * 2048})
    with pytest.raises(CodecError) as caught:
        unpack(frame, max_size=1024)
    assert "over the 1024-byte cap" in str(caught.value)


def test_decoded_arrays_are_views_of_the_frame_not_copies():
    frame = pack({"a": np.zeros((3, 512, 512, 3), dtype=np.uint8)})
    decoded = unpack(frame)["a"]
    assert decoded.base is not None and not decoded.flags.owndata


def test_a_huge_top_level_string_is_refused_without_decoding_it():
    frame = b"\xdb" + struct.pack(">I", 8 * 1024 * 1024) + b"x" * (8 * 1024 * 1024)
    with pytest.raises(CodecError) as caught:
        unpack(frame)
    assert "the top level is a str, not a map" in str(caught.value)


# ---------------------------------------------------------------- copy once


def test_a_large_array_decodes_as_a_read_only_view_of_the_frame() -> None:
    images = (np.arange(3 * 128 * 128 * 3) % 251).astype(np.uint8).reshape(3, 128, 128, 3)
    frame = pack({"message_type": "infer", "data": {"images": {"cam": images}}})
    decoded = unpack(frame)["data"]["images"]["cam"]
    assert np.array_equal(decoded, images)
    assert not decoded.flags.writeable
    assert np.shares_memory(decoded, np.frombuffer(frame, dtype=np.uint8))  # no copy of the data


def test_a_misaligned_array_is_copied_aligned_and_stays_read_only() -> None:
    values = np.arange(20_000, dtype="<f8")
    frame = pack({"k": "abc", "x": values})  # the data starts at an offset no multiple of 8
    decoded = unpack(frame)["x"]
    assert np.array_equal(decoded, values)
    assert decoded.flags.aligned and not decoded.flags.writeable


@pytest.mark.parametrize(
    "value",
    [
        np.zeros((3, 512, 512, 3), np.uint8),
        np.arange(40_000, dtype=">f8")[::2],  # not contiguous, not native order
        np.zeros((0, 70_000), np.uint8),
        np.arange(5),  # small: packed by msgpack itself
    ],
)
def test_the_one_copy_encoder_writes_the_bytes_msgpack_would(value: np.ndarray) -> None:
    from checks.plugrl.codec import _encode_extra

    message = {"data": {"x": [value, {"y": value}], "t": (value,), "n": np.float32(1.5)}, "b": b"z" * 70_000}
    assert pack(message) == msgpack.packb(message, default=_encode_extra, use_bin_type=True)


def test_a_large_bin_that_is_no_array_stays_bytes() -> None:
    decoded = unpack(raw({"blob": b"z" * 100_000, b"k" * 70_000: 1}))
    assert type(decoded["blob"]) is bytes and decoded["blob"] == b"z" * 100_000
    assert type(next(key for key in decoded if key != "blob")) is bytes


def test_a_message_holding_the_placeholders_bytes_is_still_packed_right() -> None:
    from checks.plugrl.codec import _PLACEHOLDER_BYTES, _encode_extra

    images = np.arange(3 * 64 * 64 * 3, dtype=np.uint8).reshape(3, 64, 64, 3)
    for decoy in (_PLACEHOLDER_BYTES, _PLACEHOLDER_BYTES * 2, _PLACEHOLDER_BYTES[:-1]):
        message = {"a": images, "b": b"x" + decoy + b"y", "c": [images, decoy]}
        frame = pack(message)
        assert frame == msgpack.packb(message, default=_encode_extra, use_bin_type=True)
        assert unpack(frame)["b"] == b"x" + decoy + b"y"


def test_the_placeholder_cannot_overlap_itself() -> None:
    from checks.plugrl.codec import _PLACEHOLDER_BYTES

    # So the count of its occurrences in a skeleton is the count of arrays that stand there.
    assert len(_PLACEHOLDER_BYTES) == 18 and _PLACEHOLDER_BYTES[0] not in _PLACEHOLDER_BYTES[1:]


def test_the_first_faulty_array_in_the_message_is_the_one_named() -> None:
    good = ndarray_map(b"\0" * 80_000, "|u1", [80_000])
    frame = raw({"a": good, "b": ndarray_map(b"\0" * 8, "<f8", [2]), "c": ndarray_map(b"\0", "|O", [1])})
    with pytest.raises(CodecError, match="8 bytes; shape \\[2\\]"):
        unpack(frame)
    # An array map inside another's ignored key is not decoded, and its fault is no fault of the message.
    outer = {**ndarray_map(b"\0" * 8, "<f8", [1]), b"extra": ndarray_map(b"\0", "<f8", [4])}
    assert unpack(raw({"a": outer}))["a"].tolist() == [0.0]


def test_maps_that_only_look_like_arrays_decode_as_maps() -> None:
    decoded = unpack(raw({"x": {"nd": 1}, "y": {b"nd": 2, "kind": 3}, "big": [b"z" * 70_000]}))
    assert decoded == {"x": {"nd": 1}, "y": {b"nd": 2, "kind": 3}, "big": [b"z" * 70_000]}
    assert type(decoded["big"][0]) is bytes


def test_frames_of_the_last_shape_decode_their_own_arrays_and_a_changed_header_is_scanned_again():
    # A stream repeats one message shape; the codec remembers it, so this checks the memory is never stale.
    first = np.zeros((256, 512), dtype=np.uint8)
    second = np.full((256, 512), 7, dtype=np.uint8)
    assert np.array_equal(unpack(pack({"obs": first, "step": 1}))["obs"], first)
    decoded = unpack(pack({"obs": second, "step": 2}))
    assert np.array_equal(decoded["obs"], second) and decoded["step"] == 2
    # The same size, one header byte changed: the shape claims 256 x 513, which its data does not hold.
    frame = bytearray(pack({"obs": second, "step": 2}))
    at = frame.rindex(b"\xcd\x02\x00")  # the shape's 512, a uint16
    frame[at + 2] = 0x01
    with pytest.raises(CodecError, match="needs"):
        unpack(bytes(frame))
    # A frame of the remembered size whose bin length runs into the bytes after it.
    lying = bytearray(pack({"obs": second, "step": 2}))
    start = lying.index(b"\xc6")
    lying[start + 1 : start + 5] = struct.pack(">I", 256 * 512 + 1)
    with pytest.raises(CodecError):
        unpack(bytes(lying))
