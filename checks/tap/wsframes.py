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


def unmask(data: bytes | bytearray, key: bytes) -> bytes | bytearray:
    """RFC 6455 5.3: XOR with the 4-byte key, whole words at a time."""
    if not key or not data:
        return data
    words, rest = divmod(len(data), 4)
    head = np.frombuffer(data, dtype=np.uint32, count=words) ^ np.frombuffer(key, dtype=np.uint32)[0]
    tail = bytes(b ^ key[i] for i, b in enumerate(data[words * 4 :]))
    return bytes(head.tobytes()) + tail


@dataclass
class WsMessage:
    """One message (its fragments joined) or control frame, as sent; `payload()` unmasks it."""

    opcode: int
    parts: list[tuple[bytes | bytearray, bytes]] = field(default_factory=list)  # (raw payload, mask key)
    size: int = 0
    compressed: bool = False  # RSV1 on its first frame: permessage-deflate (RFC 7692)

    def payload(self) -> bytes:
        return b"".join(unmask(raw, key) for raw, key in self.parts)

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
    payload: bytearray
    filled: int


@dataclass
class FrameReader:
    """Feed it one direction's bytes in order; it returns the head once, then each complete message."""

    head: Head | None = None
    broken: str = ""  # why the stream stopped being readable as WebSocket (the bytes still flow)
    _buffer: bytearray = field(default_factory=bytearray)
    _message: WsMessage | None = None
    _arriving: _Arriving | None = None

    def feed(self, data: bytes | memoryview) -> list[Head | WsMessage]:
        if self.broken:
            return []
        found: list[Head | WsMessage] = []
        if self._arriving is not None:
            data = self._fill(memoryview(data), found)
            if self._arriving is not None:
                return found
        self._buffer += data
        if self.head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > HEAD_LIMIT:
                    self.broken = "no end of the HTTP head within 64 KiB"
                return found
            self.head = parse_head(bytes(self._buffer[: end + 4]))
            del self._buffer[: end + 4]
            found.append(self.head)
        while (frame := self._next_frame()) is not None:
            found.append(frame)
        return found

    def _next_frame(self) -> WsMessage | None:
        """The next complete message or control frame in the buffer, if there is one."""
        while True:
            buffer = self._buffer
            if len(buffer) < 2:
                return None
            first, second = buffer[0], buffer[1]
            length, offset = second & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    return None
                length, offset = struct.unpack_from("!H", buffer, 2)[0], 4
            elif length == 127:
                if len(buffer) < 10:
                    return None
                length, offset = struct.unpack_from("!Q", buffer, 2)[0], 10
            key = b""
            if second & 0x80:
                if len(buffer) < offset + 4:
                    return None
                key, offset = bytes(buffer[offset : offset + 4]), offset + 4
            if len(buffer) < offset + length:
                if length >= LARGE:  # gather the rest straight into the payload's own buffer
                    payload = Payload(length)
                    payload[: len(buffer) - offset] = buffer[offset:]
                    self._arriving = _Arriving(first, key, payload, len(buffer) - offset)
                    buffer.clear()
                return None
            with memoryview(buffer) as view:  # one copy of the payload, not a slice and then a copy of it
                copy = Payload if length >= LARGE else bytes
                raw = copy(view[offset : offset + length])
            del buffer[: offset + length]
            done = self._take(first, raw, key)
            if done is not None:
                return done

    def _fill(self, data: memoryview, found: list[Head | WsMessage]) -> memoryview:
        """Copy into the arriving payload what belongs to it; the bytes after it, if it is complete."""
        arriving = self._arriving
        assert arriving is not None
        take = min(len(arriving.payload) - arriving.filled, len(data))
        arriving.payload[arriving.filled : arriving.filled + take] = data[:take]
        arriving.filled += take
        if arriving.filled == len(arriving.payload):
            self._arriving = None
            done = self._take(arriving.first, arriving.payload, arriving.key)
            if done is not None:
                found.append(done)
        return data[take:]

    def _take(self, first: int, raw: bytes | bytearray, key: bytes) -> WsMessage | None:
        opcode, fin, rsv1 = first & 0x0F, bool(first & 0x80), bool(first & 0x40)
        if opcode >= CLOSE:  # control frames come whole, between fragments too
            return WsMessage(opcode, [(raw, key)], len(raw))
        if opcode != CONTINUATION:
            self._message = WsMessage(opcode, compressed=rsv1)
        if self._message is None:
            self.broken = "a continuation frame with no message to continue"
            return None
        self._message.parts.append((raw, key))
        self._message.size += len(raw)
        if not fin:
            return None
        message, self._message = self._message, None
        return message
