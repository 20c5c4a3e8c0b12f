"""RLlink framing and its two body codecs, strict and bounded.

A frame is an 8-byte header, the body's byte length in ASCII decimal digits,
then the body: a JSON object (the json dialect, Ray 2.41-2.48) or a msgpack
map whose arrays follow msgpack-numpy (the msgpack dialect, Ray 2.49 on).
Reading never trusts the peer: the header must be 8 digits (the lenient
parse RLlib itself does is probed on purpose, never relied on), the length is
capped, unpacker limits bound every container, and an object-dtype array,
which msgpack-numpy would unpickle, is refused before msgpack-numpy sees it.
A msgpack-numpy array's data of at least `LARGE_BIN` bytes is decoded as a
read-only view of the received body, not copied (an unaligned one is copied
once, aligned); encoding joins such an array's bytes into the frame once.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
import msgpack_numpy
import numpy as np

from checks.errors import Malformed
from checks.msgpack_scan import LARGE_BIN, CodecError, bin_header, scan

Dialect = Literal["json", "msgpack"]

HEADER_SIZE = 8
HEADER_LIMIT = 99_999_999  # the most 8 digits can say
DEFAULT_FRAME_CAP = 64 * 1024 * 1024
MAX_CONTAINER = 1_000_000


KEPT_BYTES = 256  # of an offending header or body, what an error keeps for the judges and the evidence


class HeaderError(Malformed):
    """The 8-byte header is not 8 ASCII digits (`data`: the header)."""


class FrameTooLarge(HeaderError):
    """The header announces more bytes than the checker's cap."""


class BodyError(Malformed):
    """The body does not decode, or is not one map with a string `type` (`data`: the body's first bytes)."""


class Undecodable(BodyError):
    """The body is not one complete JSON document or msgpack object (a framing slip shows as this)."""


class NotAMessage(BodyError):
    """The body decodes but is not a map with a str `type`."""


class PickleRefused(BodyError):
    """An object-dtype array: msgpack-numpy would unpickle it, so it is refused unread."""


@dataclass(frozen=True)
class BadArray:
    """A msgpack-numpy array map that is not well formed, kept so a clause can name it."""

    reason: str


def frame(body: bytes) -> bytes:
    if len(body) > HEADER_LIMIT:
        raise ValueError(f"a {len(body)}-byte body does not fit an 8-digit header")
    return str(len(body)).zfill(HEADER_SIZE).encode("ascii") + body


def strict_length(header: bytes, cap: int) -> int:
    """The body length an 8-digit header announces; HeaderError or FrameTooLarge otherwise."""
    if len(header) != HEADER_SIZE or not all(0x30 <= b <= 0x39 for b in header):
        raise HeaderError(f"header {header!r} is not 8 ASCII digits", data=header)
    length = int(header)
    if length > cap:
        raise FrameTooLarge(f"header announces {length} bytes, over the cap of {cap}", data=header)
    return length


def lenient_length(header: bytes, cap: int) -> int:
    """What Python's int() makes of the header, as RLlib reads it (spaces, sign, underscores)."""
    try:
        length = int(header.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HeaderError(f"header {header!r} is not a number", data=header) from exc
    if not 0 <= length <= cap:
        raise FrameTooLarge(f"header announces {length} bytes (cap {cap})", data=header)
    return length


# ---------------------------------------------------------------- encoding


def encode(message: Mapping[str, Any], dialect: Dialect) -> bytes:
    """A whole frame for `message` (a dict with a str `type`)."""
    if dialect == "json":
        return frame(json.dumps(message, ensure_ascii=False).encode("utf-8"))
    if not _holds_large_array(message):
        return frame(msgpack.packb(message, default=msgpack_numpy.encode, use_bin_type=True))
    # msgpack would copy a large array's data into its buffer, then into the bytes it returns, then
    # into the frame: joined into the frame as it is, the data is copied once.
    packer = msgpack.Packer(default=msgpack_numpy.encode, use_bin_type=True)
    parts: list[bytes | memoryview] = []
    _pack_into(packer, message, parts)
    size = sum(len(part) for part in parts)
    if size > HEADER_LIMIT:
        raise ValueError(f"a {size}-byte body does not fit an 8-digit header")
    return b"".join([str(size).zfill(HEADER_SIZE).encode("ascii"), *parts])


NESTING = 32  # deeper than any message the checker or its reference peers build


def _holds_large_array(value: Any, depth: int = 0) -> bool:
    if isinstance(value, np.ndarray):
        return value.nbytes >= LARGE_BIN and value.dtype.kind not in "VO"
    if depth < NESTING and isinstance(value, Mapping):
        return any(_holds_large_array(item, depth + 1) for item in value.values())
    if depth < NESTING and isinstance(value, list | tuple):
        return any(_holds_large_array(item, depth + 1) for item in value)
    return False


def _pack_into(packer: msgpack.Packer, value: Any, parts: list[bytes | memoryview], depth: int = 0) -> None:
    """Append `value`'s msgpack to `parts`, byte for byte what packb with msgpack-numpy writes."""
    if not _holds_large_array(value, depth):
        parts.append(packer.pack(value))
    elif isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        head = packer.pack_map_header(5) + b"".join(
            packer.pack(item)
            for item in (b"nd", True, b"type", array.dtype.str, b"kind", b"", b"shape", array.shape, b"data")
        )
        parts += [head, bin_header(array.nbytes), array.data.cast("B")]
    elif isinstance(value, Mapping):
        parts.append(packer.pack_map_header(len(value)))
        for key, item in value.items():
            parts.append(packer.pack(key))
            _pack_into(packer, item, parts, depth + 1)
    else:
        parts.append(packer.pack_array_header(len(value)))
        for item in value:
            _pack_into(packer, item, parts, depth + 1)


# ---------------------------------------------------------------- decoding


def _key(obj: Mapping[Any, Any], name: str) -> Any:
    return obj.get(name.encode(), obj.get(name))


def _array_hook(obj: dict[Any, Any]) -> Any:
    """msgpack object_hook: refuse pickles, check array maps, then let msgpack-numpy decode."""
    if b"nd" not in obj and "nd" not in obj:
        return obj
    kind = _key(obj, "kind")
    if kind in (b"O", "O"):
        raise PickleRefused("an object-dtype (pickled) array; refused without unpickling")
    descr = _key(obj, "type")
    try:
        if isinstance(descr, list):
            descr = [tuple(t.decode() if isinstance(t, bytes) else t for t in field) for field in descr]
        elif isinstance(descr, bytes):
            descr = descr.decode("ascii")
        dtype = np.dtype(descr)
    except (TypeError, ValueError, UnicodeDecodeError) as exc:
        return BadArray(f"dtype {descr!r} is not a numpy dtype: {exc}")
    if dtype.hasobject:
        raise PickleRefused(f"dtype {dtype} holds Python objects; refused without unpickling")
    data, shape = _key(obj, "data"), _key(obj, "shape")
    if isinstance(data, LargeBin):
        data = data.view
    elif not isinstance(data, bytes):
        return BadArray(f"data is {type(data).__name__}, not bin")
    if _key(obj, "nd") is True:
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            return BadArray(f"shape {shape!r} is not a list of sizes")
        want = math.prod(shape) * dtype.itemsize
    else:
        want = dtype.itemsize
    if len(data) != want:
        return BadArray(f"{len(data)} data bytes for shape {shape} of {dtype} (prod(shape) x itemsize = {want})")
    array = msgpack_numpy.decode(
        {b"nd": _key(obj, "nd"), b"type": _key(obj, "type"), b"kind": kind or b"", b"shape": shape, b"data": data}
    )
    if isinstance(array, np.ndarray) and not array.flags.aligned:  # numpy would work on it, slowly: one copy
        array = array.copy()
        array.flags.writeable = False  # read-only, as a view of the body is
    return array


@dataclass(frozen=True)
class LargeBin:
    """A large bin of the body, as a view, while msgpack decodes the rest; bytes again unless an array's data."""

    view: memoryview


def _bins_to_bytes(obj: Any) -> Any:
    """A map's or list's large bins that no array took, as bytes: every other bin is bytes."""
    if isinstance(obj, dict):
        if any(isinstance(value, LargeBin) for value in obj.values()):
            return {key: bytes(v.view) if isinstance(v, LargeBin) else v for key, v in obj.items()}
        return obj
    if any(isinstance(item, LargeBin) for item in obj):
        return [bytes(item.view) if isinstance(item, LargeBin) else item for item in obj]
    return obj


def _array_or_map(obj: dict[Any, Any]) -> Any:
    return _array_hook(_bins_to_bytes(obj) if b"nd" not in obj and "nd" not in obj else obj)


_VIEW_EXT = 0x62  # the ext type a large bin is swapped for: the target's own ext types are refused unread
_INDEX = struct.Struct(">I")
SCANNED_OBJECTS = 4096  # a message with large arrays holds few objects; one with more is decoded the plain way


def _large_bins(body: bytes) -> list[tuple[int, int, int]]:
    """The bins of at least LARGE_BIN bytes, as (header start, payload start, end); none when the body
    is small, holds many objects, or is not plain msgpack (the plain decoding then says why)."""
    if len(body) < LARGE_BIN:
        return []
    try:
        return scan(body, max_objects=SCANNED_OBJECTS).views
    except CodecError:
        return []


def _unpack_msgpack(body: bytes, limits: int) -> Any:
    options: dict[str, Any] = {
        "raw": False,
        "strict_map_key": False,
        "max_str_len": limits,
        "max_bin_len": limits,
        "max_array_len": min(limits, MAX_CONTAINER),
        "max_map_len": min(limits, MAX_CONTAINER),
    }
    bins = _large_bins(body)
    if bins:
        frame_view = memoryview(body)
        views = [LargeBin(frame_view[start:end]) for _, start, end in bins]
        parts: list[bytes | memoryview] = []
        kept = 0
        for index, (header, _, end) in enumerate(bins):
            parts += [frame_view[kept:header], bytes([0xD6, _VIEW_EXT]), _INDEX.pack(index)]
            kept = end
        parts.append(frame_view[kept:])
        try:
            return msgpack.unpackb(
                b"".join(parts),
                object_hook=_array_or_map,
                list_hook=_bins_to_bytes,
                max_ext_len=4,
                ext_hook=lambda _, index: views[_INDEX.unpack(index)[0]],
                **options,
            )
        except Exception:  # noqa: BLE001 - whatever it was, the plain decoding below decides what to say
            pass
    return msgpack.unpackb(body, object_hook=_array_hook, max_ext_len=0, **options)


def decode_body(body: bytes, dialect: Dialect) -> dict[str, Any]:
    """One message: a map whose `type` is a str. BodyError (or PickleRefused) otherwise, holding the body's start."""
    kept = body[:KEPT_BYTES]
    if not body:
        raise Undecodable("empty body", data=kept)
    if dialect == "json":
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise Undecodable(f"not one JSON document: {exc}", data=kept) from exc
    else:
        try:
            message = _unpack_msgpack(body, len(body))
        except PickleRefused as exc:  # raised inside msgpack's hook, which has no body to keep
            raise PickleRefused(exc.reason, data=kept) from None
        except (msgpack.ExtraData, msgpack.FormatError, msgpack.StackError, ValueError, TypeError) as exc:
            raise Undecodable(f"not one msgpack object: {type(exc).__name__}: {exc}", data=kept) from exc
    if not isinstance(message, dict):
        raise NotAMessage(f"the body is a {type(message).__name__}, not a map", data=kept)
    kind = message.get("type")
    if not isinstance(kind, str):
        raise NotAMessage(f"`type` is {type(kind).__name__ if 'type' in message else 'missing'}, not a str", data=kept)
    return message


def sniff_dialect(body: bytes) -> Dialect | None:
    """The dialect a reply body is in, by its first byte (fact sheet section 2)."""
    if body[:1] == b"{":
        return "json"
    if body and (0x80 <= body[0] <= 0x8F or body[0] in (0xDE, 0xDF)):
        return "msgpack"
    return None
