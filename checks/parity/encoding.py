"""Canonical values as JSON that round-trips bit for bit (golden recordings, stored runs).

Strings, booleans and null are plain JSON. Everything JSON would blur carries a
one-key tag: `{"int": "12"}` (any size), `{"f64": "3ff0000000000000"}` (the
float64 bytes, big-endian; `"v"` beside it is for readers and ignored),
`{"bytes": b64}`, `{"ndarray": {...}}`, `{"scalar": {...}}`, `{"digest": {...}}`,
`{"projected": label}`. A map is `{"map": [[key, value], ...]}`, a list a list.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

from checks.errors import CheckError
from checks.parity.values import Atom, Digest, Map, Node, Seq


class BadEncoding(CheckError, ValueError):
    """A stored value that is not in this encoding."""


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise BadEncoding("expected base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise BadEncoding(f"bad base64: {exc}") from None


def encode(node: Node) -> Any:
    if isinstance(node, Seq):
        return [encode(item) for item in node.items]
    if isinstance(node, Map):
        return {"map": [[key, encode(value)] for key, value in node.items]}
    if isinstance(node, Digest):
        return {
            "digest": {
                "kind": node.kind,
                "length": node.length,
                "sha256": node.sha256,
                "head": _b64(node.head),
                "dtype": node.dtype,
                "shape": list(node.shape),
            }
        }
    return _encode_atom(node)


def _encode_atom(atom: Atom) -> Any:
    kind = atom.kind
    if kind == "null":
        return None
    if kind == "bool":
        return atom.data == b"\x01"
    if kind == "str":
        return atom.data.decode("utf-8", "surrogatepass")
    if kind == "int":
        return {"int": atom.data.decode()}
    if kind == "float64":
        return {"f64": atom.data.hex(), "v": repr(struct.unpack(">d", atom.data)[0])}
    if kind == "projected":
        return {"projected": atom.data.decode()}
    if kind in ("ndarray", "scalar"):
        return {kind: {"dtype": atom.dtype, "shape": list(atom.shape), "b64": _b64(atom.data)}}
    return {"bytes": _b64(atom.data)}


def decode(data: Any) -> Node:
    if data is None:
        return Atom("null", b"")
    if isinstance(data, bool):
        return Atom("bool", b"\x01" if data else b"\x00")
    if isinstance(data, str):
        return Atom("str", data.encode("utf-8", "surrogatepass"))
    if isinstance(data, list):
        return Seq(tuple(decode(item) for item in data))
    if not isinstance(data, dict) or not data:
        raise BadEncoding(f"unexpected {type(data).__name__} in a stored value")
    tag = "f64" if "f64" in data else next(iter(data))
    return _decode_tagged(tag, data[tag])


def _decode_tagged(tag: str, body: Any) -> Node:
    """The node of a one-key tagged object: `{"int": ...}`, `{"map": ...}`, `{"digest": ...}` and the rest."""
    if tag == "map":
        if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2 for p in body):
            raise BadEncoding("a map is a list of [key, value] pairs")
        return Map(tuple(sorted(((str(k), decode(v)) for k, v in body), key=lambda kv: kv[0])))
    if tag == "int":
        return Atom("int", str(int(body)).encode())
    if tag == "f64":
        raw = bytes.fromhex(body)
        if len(raw) != 8:
            raise BadEncoding("a float64 is 8 bytes")
        return Atom("float64", raw)
    if tag == "bytes":
        return Atom("bytes", _unb64(body))
    if tag == "projected":
        return Atom("projected", str(body).encode())
    if tag in ("ndarray", "scalar") and isinstance(body, dict):
        return Atom(tag, _unb64(body.get("b64")), str(body.get("dtype")), _shape(body.get("shape")))
    if tag == "digest" and isinstance(body, dict):
        return Digest(
            str(body.get("kind")),
            int(body.get("length", 0)),
            str(body.get("sha256")),
            _unb64(body.get("head")),
            str(body.get("dtype", "")),
            _shape(body.get("shape", [])),
        )
    raise BadEncoding(f"unknown tag {tag!r}")


def _shape(value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(n, int) for n in value):
        raise BadEncoding("a shape is a list of integers")
    return tuple(value)
