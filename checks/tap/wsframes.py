"""Reading a copy of one direction of a WebSocket connection: the HTTP upgrade head, then RFC 6455 frames.

The relay forwards the bytes first and hands the same bytes here afterwards, so nothing read
here delays them. The reader only finds frame boundaries and gathers payloads; unmasking and
decoding wait for the judging thread (`WsMessage.payload`).
"""

from __future__ import annotations

import pickle
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, SupportsIndex

import numpy as np

from checks.tap.arena import Arena, SlotPayload
from checks.tap.http1 import Head, parse_head

HEAD_LIMIT = 64 * 1024
# A payload at least this big is gathered straight into a `Payload` of its own size as it arrives (one copy).
LARGE = 64 * 1024
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 1, 2, 8, 9, 10, 0


class Payload(bytearray):
    """A large payload: pickled out of band under protocol 5 (a plain bytearray is always copied into the pickle),
    so the judging lane writes it to its pipe as it is."""

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[type[Payload], tuple[Any]]:
        if int(protocol) >= 5:
            return type(self), (pickle.PickleBuffer(self),)
        return type(self), (bytes(self),)


# A part's payload as read: bytes, a `Payload`, or (in the judging process) a view of an arena slot; in the
# relay a `SlotPayload` being gathered.
Raw = bytes | bytearray | memoryview | SlotPayload


def unmask(data: bytes | bytearray | memoryview, key: bytes) -> bytes | bytearray | memoryview:
    """RFC 6455 5.3: XOR with the 4-byte key, whole words at a time."""
    if not key or not data:
        return data
    words, rest = divmod(len(data), 4)
    head = np.frombuffer(data, dtype=np.uint32, count=words) ^ np.frombuffer(key, dtype=np.uint32)[0]
    tail = bytes(b ^ key[i] for i, b in enumerate(data[words * 4 :]))
    return b"".join((head, tail))  # one copy, straight from the XOR's result


@dataclass
class WsMessage:
    """One message (its fragments joined) or control frame, as sent; `payload()` unmasks it."""

    opcode: int
    parts: list[tuple[Raw, bytes]] = field(default_factory=list)  # (raw payload, mask key)
    size: int = 0
    compressed: bool = False  # RSV1 on its first frame: permessage-deflate (RFC 7692)
    slots: list[int] = field(default_factory=list)  # the arena slots its parts lie in, freed once judged

    def payload(self) -> bytes:
        """Unmasked and joined: always a copy of its own, never a view of an arena slot."""
        return b"".join(unmask(raw, key) for raw, key in self.parts)  # type: ignore[arg-type]

    def close_code(self) -> tuple[int | None, str]:
        data = self.payload()
        if len(data) < 2:
            return None, ""
        return struct.unpack("!H", data[:2])[0], data[2:].decode("utf-8", "replace")


class Inflater:
    """permessage-deflate (RFC 7692) for one direction: compressed messages inflated in order.

    With context takeover each message continues the last one's window, so a dropped copy ends
    inflating that direction (`lost`); the bytes themselves flow on untouched."""

    def __init__(self, takeover: bool) -> None:
        self.takeover = takeover
        self.lost = False
        self._inflate = zlib.decompressobj(-15)

    def payload(self, message: WsMessage, after_gap: bool = False) -> bytes | None:
        """The message's payload, inflated when it was compressed; None when it cannot be inflated."""
        data = message.payload()
        if not message.compressed:
            return data
        self.lost = self.lost or (after_gap and self.takeover)
        if self.lost:
            return None
        if not self.takeover:
            self._inflate = zlib.decompressobj(-15)
        try:
            return self._inflate.decompress(data + b"\x00\x00\xff\xff")
        except zlib.error:
            self.lost = True
            return None


def deflate_params(head: Head) -> dict[str, bool] | None:
    """The permessage-deflate a 101 accepted: whether each side keeps its context; None when it declined."""
    for value in head.values("sec-websocket-extensions"):
        for offer in value.split(","):
            params = [part.strip().lower() for part in offer.split(";")]
            if params[0] == "permessage-deflate":
                return {
                    "client": "client_no_context_takeover" not in params,
                    "server": "server_no_context_takeover" not in params,
                }
    return None


@dataclass
class _Arriving:
    """A large frame whose head was read and whose payload is still arriving."""

    first: int  # the head's first byte: FIN, RSV1, opcode
    key: bytes
    payload: Payload | SlotPayload  # what arrived so far: it grows by each chunk, never zero-filled ahead
    length: int


def _frame_head(data: bytearray | memoryview, at: int) -> tuple[int, bytes, int, int] | None:
    """The frame head at `at`: its first byte, mask key, where its payload starts and its length; None if cut."""
    left = len(data) - at
    if left < 2:
        return None
    first, second = data[at], data[at + 1]
    length, offset = second & 0x7F, 2
    if length == 126:
        if left < 4:
            return None
        length, offset = struct.unpack_from("!H", data, at + 2)[0], 4
    elif length == 127:
        if left < 10:
            return None
        length, offset = struct.unpack_from("!Q", data, at + 2)[0], 10
    key = b""
    if second & 0x80:
        if left < offset + 4:
            return None
        key, offset = bytes(data[at + offset : at + offset + 4]), offset + 4
    return first, key, at + offset, length


@dataclass
class FrameReader:
    """Feed it one direction's bytes in order; it returns the head once, then each complete message.

    Bytes are kept only where a frame is cut: a chunk is read where it lies, and a large payload is
    gathered straight into a buffer of its own (one copy of each byte)."""

    head: Head | None = None
    broken: str = ""  # why the stream stopped being readable as WebSocket (the bytes still flow)
    _buffer: bytearray = field(default_factory=bytearray)  # the start of a frame cut by the chunk's end
    _message: WsMessage | None = None
    _arriving: _Arriving | None = None
    arena: Arena | None = None  # where large payloads are gathered, when the judges share memory with the relay

    def use_arena(self, arena: Arena) -> None:
        self.arena = arena

    def end(self) -> list[Head | WsMessage]:
        """The stream is over: a frame or message it cut gives its slots back (nothing more is found)."""
        if self.arena is not None:
            slots = list(self._message.slots) if self._message is not None else []
            if self._arriving is not None and isinstance(self._arriving.payload, SlotPayload):
                slots.append(self._arriving.payload.slot)
            self.arena.free(slots)
        self._message = self._arriving = None
        return []

    def _large(self, data: memoryview, length: int) -> Payload | SlotPayload:
        """A buffer for a large payload of `length` bytes, holding `data` (its start): a slot, else its own."""
        slot = self.arena.claim(length) if self.arena is not None else None
        if slot is None:
            return Payload(data)
        slot.extend(data)
        return slot

    def feed(self, data: bytes | memoryview) -> list[Head | WsMessage]:
        if self.broken:
            return []
        found: list[Head | WsMessage] = []
        chunk = memoryview(data)
        if self._arriving is not None:
            chunk = self._fill(chunk, found)
            if self._arriving is not None:
                return found
        if self.head is None:
            self._buffer += chunk
            chunk = chunk[:0]
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > HEAD_LIMIT:
                    self.broken = "no end of the HTTP head within 64 KiB"
                return found
            self.head = parse_head(bytes(self._buffer[: end + 4]))
            del self._buffer[: end + 4]
            found.append(self.head)
        if self._buffer:  # a cut frame waits: the chunk continues it
            self._buffer += chunk
            with memoryview(self._buffer) as buffered:
                used = self._read_frames(buffered, found)
            del self._buffer[:used]
        else:
            used = self._read_frames(chunk, found)
            self._buffer += chunk[used:]
        return found

    def _read_frames(self, data: memoryview, found: list[Head | WsMessage]) -> int:
        """Take the complete messages and control frames at the start of `data` into `found`; the bytes used."""
        position = 0
        while self._arriving is None and (head := _frame_head(data, position)) is not None:
            first, key, start, length = head
            end = start + length
            if end > len(data):
                if length >= LARGE:  # gather the rest straight into the payload's own buffer
                    self._arriving = _Arriving(first, key, self._large(data[start:], length), length)
                    return len(data)
                break
            raw = self._large(data[start:end], length) if length >= LARGE else bytes(data[start:end])
            position = end
            done = self._take(first, raw, key)
            if done is not None:
                found.append(done)
        return position

    def _fill(self, data: memoryview, found: list[Head | WsMessage]) -> memoryview:
        """Add to the arriving payload what belongs to it; the bytes after it, if it is complete."""
        arriving = self._arriving
        assert arriving is not None
        take = min(arriving.length - len(arriving.payload), len(data))
        arriving.payload.extend(data[:take])
        if len(arriving.payload) == arriving.length:
            self._arriving = None
            done = self._take(arriving.first, arriving.payload, arriving.key)
            if done is not None:
                found.append(done)
        return data[take:]

    def _take(self, first: int, raw: Raw, key: bytes) -> WsMessage | None:
        opcode, fin, rsv1 = first & 0x0F, bool(first & 0x80), bool(first & 0x40)
        slots = [raw.slot] if isinstance(raw, SlotPayload) else []
        if opcode >= CLOSE:  # control frames come whole, between fragments too
            return WsMessage(opcode, [(raw, key)], len(raw), slots=slots)
        if opcode != CONTINUATION:
            if self._message is not None and self.arena is not None:
                self.arena.free(self._message.slots)  # a message left unfinished: never offered
            self._message = WsMessage(opcode, compressed=rsv1)
        if self._message is None:
            self.broken = "a continuation frame with no message to continue"
            if self.arena is not None:
                self.arena.free(slots)
            return None
        self._message.parts.append((raw, key))
        self._message.slots += slots
        self._message.size += len(raw)
        if not fin:
            return None
        message, self._message = self._message, None
        return message
