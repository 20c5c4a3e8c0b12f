"""Hostile PlugRL "servers": raw TCP peers that do the WebSocket handshake and then attack the checker.

Each is an asyncio streams callback. They write frames by hand, so they can
send what no WebSocket library would (a 256 MiB length, a reset mid-frame),
and they stream big payloads from one small reused buffer, so the memory a
test measures is the checker's, not theirs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import random
import struct
import sys
from collections.abc import Awaitable, Callable

import msgpack

WEBSOCKET_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
CHUNK = b"\0" * (1024 * 1024)

Hostile = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer the client's upgrade request with 101 Switching Protocols."""
    request = await reader.readuntil(b"\r\n\r\n")
    key = b""
    for line in request.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"sec-websocket-key":
            key = value.strip()
    accept = base64.b64encode(hashlib.sha1(key + WEBSOCKET_GUID).digest())
    writer.write(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n"
    )
    await writer.drain()


def frame_header(length: int, opcode: int = 0x2) -> bytes:
    """An unmasked server frame header with FIN set."""
    if length < 126:
        return bytes([0x80 | opcode, length])
    if length < 1 << 16:
        return bytes([0x80 | opcode, 126]) + struct.pack(">H", length)
    return bytes([0x80 | opcode, 127]) + struct.pack(">Q", length)


def frame(payload: bytes, opcode: int = 0x2) -> bytes:
    return frame_header(len(payload), opcode) + payload


METADATA = frame(msgpack.packb({"message_type": "metadata", "data": {"protocol_version": 1}}, use_bin_type=True))


async def stream(writer: asyncio.StreamWriter, total: int) -> None:
    """Write `total` zero bytes from the one reused chunk."""
    while total > 0:
        piece = CHUNK[: min(total, len(CHUNK))]
        writer.write(piece)
        await writer.drain()
        total -= len(piece)


async def discard(reader: asyncio.StreamReader) -> None:
    while await reader.read(65536):
        pass


# ---------------------------------------------------------------- the attackers


async def huge_frame(reader, writer) -> None:
    """A 256 MiB binary frame where the metadata belongs."""
    await handshake(reader, writer)
    writer.write(frame_header(256 * 1024 * 1024))
    await stream(writer, 256 * 1024 * 1024)


async def endless_frames(reader, writer) -> None:
    """Small binary frames, as fast as the client reads them, forever."""
    await handshake(reader, writer)
    noise = frame(msgpack.packb({"message_type": "noise"}))
    while True:
        writer.write(noise * 64)
        await writer.drain()


async def endless_pings(reader, writer) -> None:
    """Ping after ping and never a message (the client's pongs are read and dropped)."""
    await handshake(reader, writer)
    pongs = asyncio.ensure_future(discard(reader))
    ping = frame(b"p" * 125, opcode=0x9)
    try:
        while True:
            writer.write(ping * 16)
            await writer.drain()
            await asyncio.sleep(0)
    finally:
        pongs.cancel()


async def pings_never_reading(reader, writer, lasts: float = 120.0) -> None:
    """Valid metadata, then 125-byte pings back to back as fast as TCP allows; the socket is never read.

    The checker's automatic pongs have nowhere to go, so they back up in its own
    write buffer unless it stops reading.
    """
    await handshake(reader, writer)
    writer.write(METADATA)
    ping = frame(b"p" * 125, opcode=0x9) * 64
    end = asyncio.get_running_loop().time() + lasts
    while asyncio.get_running_loop().time() < end:
        writer.write(ping)
        await writer.drain()


async def one_byte_at_a_time(reader, writer, interval: float = 0.2) -> None:
    """A valid metadata frame, dripped one byte per interval (a second, scaled down)."""
    await handshake(reader, writer)
    for byte in METADATA:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(interval)


async def nesting_bomb(reader, writer) -> None:
    """A map holding a million nested one-element arrays."""
    await handshake(reader, writer)
    payload = b"\x81\xa4data" + b"\x91" * 1_000_000 + b"\xc0"
    writer.write(frame(payload))
    await writer.drain()
    await discard(reader)


async def bin32_four_gib(reader, writer) -> None:
    """A bin32 header claiming 4 GiB, followed by 16 bytes."""
    await handshake(reader, writer)
    payload = b"\x82\xacmessage_type\xa8metadata\xa4data\xc6\xff\xff\xff\xff" + b"\0" * 16
    writer.write(frame(payload))
    await writer.drain()
    await discard(reader)


async def shape_bomb(reader, writer) -> None:
    """Proper metadata, then an action claiming shape [100000, 100000] with 8 bytes of data."""
    await handshake(reader, writer)
    writer.write(METADATA)
    await writer.drain()
    await reader.read(1)  # the client has sent something: answer it with the bomb
    action = {
        b"__ndarray__": True,
        b"data": b"\0" * 8,
        b"dtype": "<f8",
        b"shape": [100000, 100000],
    }
    message = {"message_type": "action", "data": {"env_ids": [0, 1, 2], "action": action}}
    writer.write(frame(msgpack.packb(message, use_bin_type=True)))
    await writer.drain()
    await discard(reader)


async def ten_million_keys(reader, writer) -> None:
    """A map32 of ten million int keys with nil values (20 MB), streamed in pieces."""
    await handshake(reader, writer)
    keys = 10_000_000
    writer.write(frame_header(5 + 2 * keys) + b"\xdf" + struct.pack(">I", keys))
    piece = b"\x00\xc0" * (len(CHUNK) // 2)
    left = keys
    while left:
        count = min(left, len(piece) // 2)
        writer.write(piece[: 2 * count])
        await writer.drain()
        left -= count
    await discard(reader)


async def fifty_mb_string(reader, writer) -> None:
    """A 50 MB msgpack str where the metadata map belongs."""
    await handshake(reader, writer)
    length = 50 * 1000 * 1000
    writer.write(frame_header(5 + length) + b"\xdb" + struct.pack(">I", length))
    await stream(writer, length)
    await discard(reader)


# Markup, a terminal escape sequence, CR LF and non-ASCII text: whatever could hurt a page, a log or a decoder.
NASTY_TEXT = "<script>alert(1)</script>\x1b[2J\x1b[31m\r\nSet-Cookie: x=1\r\n\u00e9\u4e2d\U0001f600 ".encode()


async def fifty_mb_string_value(reader, writer, lasts: float = 120.0) -> None:
    """Metadata whose map holds one 50 MB str value of nasty text, then silence."""
    await handshake(reader, writer)
    length = 50 * 1000 * 1000
    head = msgpack.packb({"message_type": "metadata", "data": {"protocol_version": 1, "banner": ""}})
    head = head[:-1]  # drop the empty str, to stream the long one in its place
    writer.write(frame_header(len(head) + 5 + length) + head + b"\xdb" + struct.pack(">I", length))
    chunk = NASTY_TEXT * (len(CHUNK) // len(NASTY_TEXT))
    left = length
    while left:
        piece = chunk[: min(left, len(chunk))]
        if len(piece) < len(chunk):
            piece = b"x" * len(piece)  # the tail stays valid UTF-8 wherever it is cut
        writer.write(piece)
        await writer.drain()
        left -= len(piece)
    await asyncio.wait_for(discard(reader), timeout=lasts)


async def silence_after_handshake(reader, writer, lasts: float = 120.0) -> None:
    """The handshake, then not a byte: no metadata, no close (what the checker sends is read and dropped)."""
    await handshake(reader, writer)
    await asyncio.wait_for(discard(reader), timeout=lasts)


async def endless_fragments(reader, writer) -> None:
    """A binary message that never ends: a first fragment without FIN, then continuation frames forever."""
    await handshake(reader, writer)
    piece = b"\0" * 60_000
    writer.write(bytes([0x02, 126]) + struct.pack(">H", len(piece)) + piece)  # opcode binary, FIN clear
    continuation = (bytes([0x00, 126]) + struct.pack(">H", len(piece)) + piece) * 16
    while True:
        writer.write(continuation)
        await writer.drain()


async def random_bytes(reader, writer) -> None:
    """Random bytes right after the handshake, in place of any frame."""
    await handshake(reader, writer)
    writer.write(random.Random(0).randbytes(64 * 1024))
    await writer.drain()
    await discard(reader)


async def reset_mid_frame(reader, writer) -> None:
    """Half a frame, then a TCP reset."""
    await handshake(reader, writer)
    writer.write(METADATA[: len(METADATA) // 2])
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.transport.abort()


HOSTILE: dict[str, Hostile] = {
    "huge-frame": huge_frame,
    "endless-frames": endless_frames,
    "endless-pings": endless_pings,
    "one-byte-at-a-time": one_byte_at_a_time,
    "nesting-bomb": nesting_bomb,
    "bin32-4gib": bin32_four_gib,
    "shape-bomb": shape_bomb,
    "ten-million-keys": ten_million_keys,
    "fifty-mb-string": fifty_mb_string,
    "fifty-mb-string-value": fifty_mb_string_value,
    "pings-never-reading": pings_never_reading,
    "random-bytes": random_bytes,
    "reset-mid-frame": reset_mid_frame,
    "silence-after-handshake": silence_after_handshake,
    "endless-fragments": endless_fragments,
}


async def serve(name: str, lifetime: float) -> None:
    """Serve one attacker on 127.0.0.1 at a free port; print its URL; stop after `lifetime` seconds."""
    attack = HOSTILE[name]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await attack(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    host, port = server.sockets[0].getsockname()[:2]
    print(f"ws://{host}:{port}", flush=True)
    async with server:
        await asyncio.sleep(lifetime)


def main(argv: list[str]) -> int:
    """`python -m tests.zoo.plugrl_server.hostile NAME [LIFETIME]`: serve one attacker (for the RSS bench)."""
    if not argv or argv[0] not in HOSTILE:
        print(f"usage: python -m tests.zoo.plugrl_server.hostile {{{','.join(HOSTILE)}}} [LIFETIME]", file=sys.stderr)
        return 2
    asyncio.run(serve(argv[0], float(argv[1]) if len(argv) > 1 else 600.0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
