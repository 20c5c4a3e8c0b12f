"""Canonical values: what a parity script observed, in a form compared bit for bit.

Every observed value becomes a tree of `Seq`, `Map` and `Atom`. An atom keeps
its kind and the exact bytes that identify it: a float its packed float64 (so
-0.0 and 0.0 differ, and NaN payloads count), an array its dtype, shape and
C-order bytes, an int its decimal digits. A map's keys are sorted, so the
order a server happened to emit them in never matters. An atom larger than the
evidence cap keeps only its length, SHA-256 and a head to show (`Digest`):
compared by the first two, shown by the third.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

from checks.errors import CheckError

# Bytes of one atom kept whole; a larger one is kept as a digest.
EVIDENCE_CAP = 64 * 1024
# Bytes of a digested atom kept to show what it began with.
DIGEST_HEAD = 256


class NotCanonical(CheckError, TypeError):
    """A value the comparator has no bit-exact form for (an object array, an unknown type)."""


@dataclass(frozen=True)
class Atom:
    """A leaf: `kind` is null/bool/int/float64/str/bytes/ndarray/scalar/projected."""

    kind: str
    data: bytes
    dtype: str = ""
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class Digest:
    """An atom over the evidence cap: its kind, dtype and shape, length and SHA-256, and a head."""

    kind: str
    length: int
    sha256: str
    head: bytes
    dtype: str = ""
    shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Map:
    items: tuple[tuple[str, Node], ...]  # sorted by key

    def get(self, key: str) -> Node | None:
        for name, value in self.items:
            if name == key:
                return value
        return None


Node = Atom | Digest | Seq | Map
Leaf = Atom | Digest


def digest_of(atom: Atom) -> Digest:
    sha256 = hashlib.sha256(atom.data).hexdigest()
    return Digest(atom.kind, len(atom.data), sha256, atom.data[:DIGEST_HEAD], atom.dtype, atom.shape)


def capped(atom: Atom, cap: int) -> Leaf:
    return digest_of(atom) if len(atom.data) > cap else atom


def float_bytes(value: float) -> bytes:
    return struct.pack(">d", value)


def map_key(key: Any) -> str:
    """A map key as text: strings as they are, anything else (msgpack bytes keys, ints) by its repr."""
    return key if isinstance(key, str) else repr(key)


def dtype_name(dtype: np.dtype[Any]) -> str:
    return dtype.str if dtype.fields is None else repr(dtype.descr)


def array_atom(array: np.ndarray[Any, Any]) -> Atom:
    if array.dtype.hasobject:
        raise NotCanonical("an object array has no bytes to compare")
    return Atom("ndarray", array.tobytes(order="C"), dtype_name(array.dtype), tuple(int(n) for n in array.shape))


def canonical(value: Any, cap: int = EVIDENCE_CAP) -> Node:
    """The canonical tree of an observed value; raises NotCanonical for what has no bit-exact form."""
    return _canonical(value, cap, 0)


def _canonical(value: Any, cap: int, depth: int) -> Node:
    if depth > 200:
        raise NotCanonical("nested more than 200 levels deep")
    if isinstance(value, (Atom, Digest, Seq, Map)):
        return value
    if isinstance(value, enum.Enum):
        return _canonical(value.value, cap, depth + 1)
    if isinstance(value, dict):
        items = sorted(((map_key(k), _canonical(v, cap, depth + 1)) for k, v in value.items()), key=lambda kv: kv[0])
        return Map(tuple(items))
    if isinstance(value, (list, tuple)):
        return Seq(tuple(_canonical(item, cap, depth + 1) for item in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, cap, depth + 1)
    return _leaf(value, cap)


def _leaf(value: Any, cap: int) -> Leaf:
    """The atom of a value that is not a container (an enum, a dict, a list, a dataclass)."""
    if value is None:
        return Atom("null", b"")
    if isinstance(value, bool):  # before int: a bool is an int to isinstance
        return Atom("bool", b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return capped(Atom("int", str(int(value)).encode()), cap)
    if isinstance(value, float):
        return Atom("float64", float_bytes(value))
    if isinstance(value, str):
        return capped(Atom("str", value.encode("utf-8", "surrogatepass")), cap)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return capped(Atom("bytes", bytes(value)), cap)
    if isinstance(value, np.ndarray):
        return capped(array_atom(value), cap)
    if isinstance(value, np.generic):
        if value.dtype.hasobject:
            raise NotCanonical("an object scalar has no bytes to compare")
        return Atom("scalar", value.tobytes(), dtype_name(value.dtype))
    raise NotCanonical(f"no canonical form for a {type(value).__name__}")


# ---------------------------------------------------------------- showing


def shown(leaf: Leaf | None, limit: int = 120) -> str:
    """A leaf for people, cut to `limit` characters."""
    if leaf is None:
        return "(absent)"
    if isinstance(leaf, Digest):
        head = _show_atom(Atom(leaf.kind, leaf.head, leaf.dtype, leaf.shape), limit)
        return f"{head}… ({leaf.length} bytes, sha256 {leaf.sha256[:16]}…)"
    return _show_atom(leaf, limit)


def _show_atom(atom: Atom, limit: int) -> str:
    text: str
    if atom.kind == "null":
        text = "null"
    elif atom.kind == "bool":
        text = "true" if atom.data == b"\x01" else "false"
    elif atom.kind == "int":
        text = atom.data.decode()
    elif atom.kind == "float64":
        text = repr(struct.unpack(">d", atom.data)[0]) if len(atom.data) == 8 else "?"
    elif atom.kind == "str":
        text = repr(atom.data.decode("utf-8", "replace"))
    elif atom.kind == "projected":
        text = f"<{atom.data.decode()}>"
    elif atom.kind in ("ndarray", "scalar"):
        text = f"{atom.kind} {atom.dtype} {list(atom.shape)} {_array_head(atom)}"
    else:
        text = f"<{len(atom.data)} bytes>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _array_head(atom: Atom) -> str:
    try:
        dtype = np.dtype(atom.dtype)
        usable = len(atom.data) - len(atom.data) % max(dtype.itemsize, 1)
        values = np.frombuffer(atom.data[:usable], dtype=dtype)[:6].tolist()
    except (TypeError, ValueError):
        return f"<{len(atom.data)} bytes>"
    return str(values)


def hex_bytes(data: bytes, limit: int = 64) -> str:
    """Bytes as hex, cut to `limit` bytes with the full length said."""
    text = data[:limit].hex()
    return text if len(data) <= limit else f"{text}… ({len(data)} bytes)"


def is_finite_number(leaf: Node) -> bool:
    if not isinstance(leaf, Atom):
        return False
    if leaf.kind == "int":
        return True
    return leaf.kind == "float64" and math.isfinite(struct.unpack(">d", leaf.data)[0])
