"""A first look at a received msgpack frame: its structure, checked without building it.

Both msgpack wires use it: PlugRL's codec (openpi ndarray maps) and RLlink's msgpack-numpy dialect.

`scan` walks the frame's object headers in one loop: every length is checked
against the bytes that are actually there, containers are bounded in nesting
depth and the whole message in object count, and extension types are refused.
It also says where the strs too long to decode whole are (`Scanned.cuts`) and
where the bins large enough to stay in the frame are (`Scanned.views`), so the
decoder never copies a large payload and never believes a claimed size.
"""

from __future__ import annotations

import struct
from typing import Literal, NamedTuple

from checks.errors import Malformed

MAX_DEPTH = 64  # a real message nests about six levels deep
MAX_OBJECTS = 500_000  # msgpack objects per message; real messages have hundreds
STR_CAP = 64 * 1024  # bytes of one str decoded whole; PlugRL's strings are keys, types and names
TEXT_BUDGET = 8 * 1024 * 1024  # bytes of str decoded whole per message, so many strings stay cheap too
LARGE_BIN = 64 * 1024  # bins of at least this many bytes stay in the frame, decoded as views of it


CodecPart = Literal["message", "array"]


class CodecError(Malformed):
    """A frame that is not a valid message of its kind's msgpack wire (PlugRL, RLlink). `part` says whether
    an array ("array") or the message around it ("message") is at fault; `data` is the frame's head, if any."""

    def __init__(self, reason: str, part: CodecPart = "message", *, data: bytes = b"") -> None:
        super().__init__(reason, data=data)
        self.part: CodecPart = part


# Each as (header start, payload start, end) in the frame.
Span = tuple[int, int, int]


class Scanned(NamedTuple):
    cuts: list[Span]  # strs too long to decode whole
    views: list[Span]  # bins decoded as views of the frame


# What the first byte of a msgpack object says: the width of a scalar's payload.
_FIXED_PAYLOAD = {
    0xC0: 0,
    0xC2: 0,
    0xC3: 0,  # nil, false, true
    0xCA: 4,
    0xCB: 8,  # float32, float64
    0xCC: 1,
    0xCD: 2,
    0xCE: 4,
    0xCF: 8,  # uint
    0xD0: 1,
    0xD1: 2,
    0xD2: 4,
    0xD3: 8,  # int
}


def _fixed_header(head: int) -> tuple[int, int] | None:
    """For a first byte that is the whole header: the bytes the object takes (header and payload) and the
    objects it contains."""
    if head <= 0x7F or head >= 0xE0:
        return 1, 0  # fixint
    if head <= 0x8F:
        return 1, 2 * (head & 0x0F)  # fixmap
    if head <= 0x9F:
        return 1, head & 0x0F  # fixarray
    if head <= 0xBF:
        return 1 + (head & 0x1F), 0  # fixstr: always decoded whole, and not counted against the text budget
    if head in _FIXED_PAYLOAD:
        return 1 + _FIXED_PAYLOAD[head], 0
    return None


_FIXED_HEADERS = tuple(_fixed_header(head) for head in range(256))  # looked up for every object scanned
_SIZED = {  # bin and str: the length field's width
    0xC4: (1, "a bin"),
    0xC5: (2, "a bin"),
    0xC6: (4, "a bin"),
    0xD9: (1, "a str"),
    0xDA: (2, "a str"),
    0xDB: (4, "a str"),
}
_CONTAINERS = {0xDC: (2, "an array"), 0xDD: (4, "an array"), 0xDE: (2, "a map"), 0xDF: (4, "a map")}
EXTENSIONS = {0xC7, 0xC8, 0xC9, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8}
_LENGTH = {1: struct.Struct(">B"), 2: struct.Struct(">H"), 4: struct.Struct(">I")}


def scan(data: bytes, max_depth: int = MAX_DEPTH, max_objects: int = MAX_OBJECTS) -> Scanned:
    """Check a frame's msgpack structure without building it; CodecError on the first problem.

    Each container's element count is checked against the bytes left (every
    element takes at least one), each bin or str length likewise, so nothing
    a header claims is believed before the bytes are seen. One loop with the
    one-byte headers looked up in a table: this runs on every frame received.
    """
    size = len(data)
    if size == 0:
        raise CodecError("an empty frame is not msgpack")
    found = Scanned([], [])
    text_bytes = 0
    position = 0
    objects = 1  # the top level; each container adds what it claims, checked against the bytes left
    left = 1  # objects still to read in the innermost open container (the top level holds one)
    enclosing: list[int] = []  # the same count for each container around it
    fixed_headers = _FIXED_HEADERS
    try:  # reading past the end raises IndexError: one check for every way a frame can be cut short
        while True:
            head = data[position]
            fixed = fixed_headers[head]
            if fixed is not None:
                width, count = fixed
                position += width
            elif head == 0xC4 and position + 2 + data[position + 1] <= size:  # bin8: the keys of every array map
                position += 2 + data[position + 1]
                count = 0
            else:
                position, count, text_bytes = _long_header(data, position + 1, head, text_bytes, found)
            if count:
                objects += count
                if objects > max_objects:
                    raise CodecError(f"the message holds more than {max_objects} msgpack objects")
                if len(enclosing) >= max_depth:
                    raise CodecError(f"the message nests deeper than {max_depth} levels")
                enclosing.append(left - 1)
                left = count
                continue
            left -= 1
            while not left and enclosing:  # the innermost container is complete: back to the one around it
                left = enclosing.pop()
            if not left:
                break
    except IndexError:
        raise CodecError(f"not msgpack: the frame ends inside a message ({size} bytes)") from None
    if position > size:  # the last object's fixed payload runs past the end
        raise CodecError(f"not msgpack: the frame ends inside a message ({size} bytes)")
    if position != size:
        raise CodecError(f"not msgpack: {size - position} bytes follow the message")
    return found


def _long_header(data: bytes, position: int, head: int, text_bytes: int, found: Scanned) -> tuple[int, int, int]:
    """Past an object whose header has a length field (`position` is just after `head`): the position
    after the header (and a bin's or str's payload), the objects it contains, and the text bytes."""
    if head in _SIZED:
        position, text_bytes = _sized(data, position, *_SIZED[head], text_bytes, found)
        return position, 0, text_bytes
    if head in _CONTAINERS:
        position, count = _container(data, position, *_CONTAINERS[head])
        return position, count, text_bytes
    if head in EXTENSIONS:
        raise CodecError("msgpack extension types are not part of PlugRL")
    raise CodecError(f"not msgpack: byte 0x{head:02x} at offset {position - 1} starts no object")


def _sized(data: bytes, position: int, width: int, what: str, text_bytes: int, found: Scanned) -> tuple[int, int]:
    """Past a bin or str whose length field starts at `position`: the position after it, and the text bytes."""
    length = _read_length(data, position, width, what)
    position += width
    left = len(data) - position
    if length > left:
        raise CodecError(f"not msgpack: {what} claims {length} bytes but only {left} follow")
    if what == "a str":
        if length > STR_CAP or text_bytes + length > TEXT_BUDGET:
            found.cuts.append((position - width - 1, position, position + length))
        else:
            text_bytes += length
    elif length >= LARGE_BIN:
        found.views.append((position - width - 1, position, position + length))
    return position + length, text_bytes


def _container(data: bytes, position: int, width: int, what: str) -> tuple[int, int]:
    """Past an array or map header whose count starts at `position`: the position after it, and its objects."""
    count = _read_length(data, position, width, what)
    position += width
    if what == "a map":
        count *= 2
    left = len(data) - position
    if count > left:
        raise CodecError(f"not msgpack: {what} claims {count} items but only {left} bytes follow")
    return position, count


def _read_length(data: bytes, position: int, width: int, what: str) -> int:
    if position + width > len(data):
        raise CodecError(f"not msgpack: the frame ends inside {what} header")
    length: int = _LENGTH[width].unpack_from(data, position)[0]
    return length


def bin_header(size: int) -> bytes:
    """The msgpack bin header for `size` bytes (bin8, bin16 or bin32), for payloads joined in after packing."""
    if size < 1 << 8:
        return bytes([0xC4, size])
    if size < 1 << 16:
        return b"\xc5" + size.to_bytes(2, "big")
    return b"\xc6" + size.to_bytes(4, "big")
