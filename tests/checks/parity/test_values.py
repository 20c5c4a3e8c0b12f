"""Canonical values: each observed type's atom, digests over the cap, and how leaves are shown."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import struct

import numpy as np
import pytest

from checks.parity.values import (
    DIGEST_HEAD,
    Atom,
    Digest,
    Map,
    NotCanonical,
    Seq,
    canonical,
    capped,
    digest_of,
    hex_bytes,
    is_finite_number,
    map_key,
    shown,
)


class Colour(enum.Enum):
    RED = "red"


class Size(enum.IntEnum):
    BIG = 3


@dataclasses.dataclass
class Point:
    x: int
    y: float


@pytest.mark.parametrize(
    ("value", "atom"),
    [
        (None, Atom("null", b"")),
        (True, Atom("bool", b"\x01")),
        (False, Atom("bool", b"\x00")),
        (0, Atom("int", b"0")),
        (-(2**70), Atom("int", str(-(2**70)).encode())),
        (1.5, Atom("float64", struct.pack(">d", 1.5))),
        ("é", Atom("str", "é".encode())),
        (b"\x00\xff", Atom("bytes", b"\x00\xff")),
        (bytearray(b"ab"), Atom("bytes", b"ab")),
        (memoryview(b"cd"), Atom("bytes", b"cd")),
        (np.float32(1.0), Atom("scalar", np.float32(1.0).tobytes(), "<f4")),
    ],
)
def test_each_scalar_type_has_its_own_atom(value, atom):
    assert canonical(value) == atom


def test_a_bool_is_not_the_int_it_equals():
    assert canonical(True) != canonical(1)


def test_a_lone_surrogate_is_kept_rather_than_refused():
    assert canonical("\ud800") == Atom("str", "\ud800".encode("utf-8", "surrogatepass"))


def test_an_array_keeps_dtype_shape_and_c_order_bytes():
    array = np.arange(6, dtype="<i2").reshape(2, 3)
    assert canonical(array) == Atom("ndarray", array.tobytes(order="C"), "<i2", (2, 3))
    assert canonical(np.asfortranarray(array)) == canonical(array)


def test_enums_are_their_values_and_dataclasses_their_fields():
    assert canonical(Colour.RED) == canonical("red")
    assert canonical(Size.BIG) == canonical(3)
    assert canonical(Point(1, 2.0)) == canonical({"y": 2.0, "x": 1})


def test_maps_sort_their_keys_and_name_non_string_keys_by_repr():
    node = canonical({"b": 1, "a": 2, b"k": 3, 4: 5})
    assert isinstance(node, Map)
    assert [key for key, _ in node.items] == sorted(["b", "a", "b'k'", "4"])
    assert node.get("a") == canonical(2) and node.get("missing") is None
    assert map_key("s") == "s" and map_key(7) == "7"


def test_lists_and_tuples_are_the_same_sequence():
    assert canonical([1, "x"]) == canonical((1, "x")) == Seq((canonical(1), canonical("x")))


def test_a_canonical_node_is_its_own_canonical_form():
    node = canonical({"a": [1.0]})
    assert canonical(node) is node


@pytest.mark.parametrize("value", [np.array([object()], dtype=object), object(), {1, 2}, Point])
def test_what_has_no_bit_exact_form_is_refused(value):
    with pytest.raises(NotCanonical):
        canonical(value)


def test_nesting_deeper_than_200_levels_is_refused():
    value: list[object] = []
    for _ in range(250):
        value = [value]
    with pytest.raises(NotCanonical, match="200 levels"):
        canonical(value)


def test_an_atom_over_the_cap_becomes_a_digest_with_a_head():
    data = bytes(range(256)) * 4
    digest = canonical(data, cap=100)
    assert digest == Digest("bytes", len(data), hashlib.sha256(data).hexdigest(), data[:DIGEST_HEAD])
    assert capped(Atom("bytes", data[:100]), 100) == Atom("bytes", data[:100])
    assert digest_of(Atom("str", b"abc")).length == 3


def test_a_digested_array_keeps_its_dtype_and_shape():
    array = np.zeros((50, 4), dtype="<f8")
    digest = canonical(array, cap=64)
    assert isinstance(digest, Digest)
    assert (digest.kind, digest.dtype, digest.shape, digest.length) == ("ndarray", "<f8", (50, 4), array.nbytes)


def test_floats_are_compared_by_their_bits():
    assert canonical(0.0) != canonical(-0.0)
    assert canonical(math.nan) == canonical(math.nan)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "null"),
        (True, "true"),
        (12, "12"),
        (0.1, "0.1"),
        ("hi", "'hi'"),
        (b"abc", "<3 bytes>"),
        (np.array([1, 2], dtype="<i4"), "ndarray <i4 [2] [1, 2]"),
        (np.float32(2.5), "scalar <f4 [] [2.5]"),
    ],
)
def test_leaves_are_shown_for_people(value, text):
    assert shown(canonical(value)) == text


def test_showing_cuts_long_leaves_and_says_what_a_digest_hides():
    assert shown(None) == "(absent)"
    assert shown(canonical("x" * 500), limit=20) == repr("x" * 500)[:19] + "…"
    digest = canonical("y" * 1000, cap=10)
    assert isinstance(digest, Digest)
    text = shown(digest)
    assert "1000 bytes" in text and digest.sha256[:16] in text
    assert shown(Atom("projected", b"tool-call#1")) == "<tool-call#1>"
    assert shown(Atom("ndarray", b"\x01\x02\x03", "<i2", (2,))) == "ndarray <i2 [2] [513]"
    assert shown(Atom("ndarray", b"", "no such dtype", ())) == "ndarray no such dtype [] <0 bytes>"


def test_hex_bytes_cuts_and_says_the_length():
    assert hex_bytes(b"\x01\xff") == "01ff"
    assert hex_bytes(bytes(100), limit=2) == "0000… (100 bytes)"


def test_finite_numbers_are_ints_and_finite_floats():
    assert is_finite_number(canonical(3)) and is_finite_number(canonical(2.5))
    assert not is_finite_number(canonical(math.inf)) and not is_finite_number(canonical(math.nan))
    assert not is_finite_number(canonical("3")) and not is_finite_number(canonical([1]))
