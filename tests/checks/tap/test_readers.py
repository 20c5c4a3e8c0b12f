"""The copy readers find the same messages however the bytes are cut: WebSocket frames (masked, fragmented,
control frames between fragments) and HTTP/1.1 messages (content-length, chunked with trailers, to EOF)."""

from __future__ import annotations

import os

import pytest

from checks.tap.http1 import MessageReader, scrubbed
from checks.tap.wsframes import LARGE, FrameReader, Payload, WsMessage
from tests.checks.tap.test_bytes import ws_frame

HEAD = b"GET / HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"


def feed_in_pieces(reader: FrameReader | MessageReader, data: bytes, size: int) -> list:
    """Fed as the relay feeds: views of one receive buffer, overwritten after each feed (a reader keeps copies)."""
    found = []
    buffer = memoryview(bytearray(min(size, len(data))))
    for start in range(0, len(data), size):
        piece = data[start : start + size]
        buffer[: len(piece)] = piece
        found += reader.feed(buffer[: len(piece)])
        buffer[:] = b"\xee" * len(buffer)
    return found


@pytest.mark.parametrize("size", [1, 3, 7, 1000, 1 << 20])
def test_frames_are_found_whatever_the_cut(size):
    key = os.urandom(4)
    big = os.urandom(30_000 + 2 * LARGE)  # its second fragment is gathered into a payload of its own
    stream = (
        HEAD
        + ws_frame(b"hello", key=key)
        + ws_frame(big[:30_000], fin=False, key=key)
        + ws_frame(b"ping", opcode=9, key=key)
        + ws_frame(big[30_000:], opcode=0, key=key)
        + ws_frame(b"\x03\xe8bye", opcode=8, key=key)
    )
    reader = FrameReader()
    found = feed_in_pieces(reader, stream, size)
    assert reader.head is not None and reader.head.value("sec-websocket-extensions") == "permessage-deflate"
    messages = [item for item in found if isinstance(item, WsMessage)]
    assert [m.opcode for m in messages] == [2, 9, 2, 8]
    assert messages[0].payload() == b"hello" and messages[2].payload() == big
    assert isinstance(messages[2].parts[1][0], Payload)
    assert messages[3].close_code() == (1000, "bye")


@pytest.mark.parametrize("size", [1, 5, 64, 100_000])
def test_http_messages_are_found_whatever_the_cut(size):
    requests = (
        b"POST /a HTTP/1.1\r\nContent-Length: 5\r\nAuthorization: Bearer sk-1\r\n\r\nhello"
        b"HEAD /b HTTP/1.1\r\n\r\n"
        b"GET /c HTTP/1.1\r\n\r\n"
    )
    responses = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: 1\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end"
    )
    responder = MessageReader(responses=True)
    found = feed_in_pieces(MessageReader(responses=False), requests, size)
    assert [(m.head.method_path(), m.body) for m in found] == [
        (("POST", "/a"), b"hello"),
        (("HEAD", "/b"), b""),
        (("GET", "/c"), b""),
    ]
    responder.methods.extend(["POST", "HEAD", "GET"])
    answers = feed_in_pieces(responder, responses, size) + responder.end()
    assert [(m.head.status(), m.body, m.complete) for m in answers] == [
        (100, b"", True),
        (200, b"abcde", True),
        (200, b"", True),
        (200, b"until the end", True),
    ]
    assert ("Authorization", "[scrubbed]") in scrubbed(found[0].head.headers)
