"""The shared recorded HTTP client: the SSE parser, the capped streamed read, the deadline, a transcript always."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from checks.errors import Malformed, NoReply, TargetUnreachable
from checks.evidence import Transcript
from checks.http_client import HttpClient, SseParser, _lines, parse_sse

# -- the SSE parser


def test_data_lines_join_into_one_payload_per_blank_line():
    events = parse_sse('data: {"a": 1}\n\ndata: first\ndata: second\n\ndata: [DONE]\n\n')
    assert events.payloads == ['{"a": 1}', "first\nsecond"]
    assert events.done and events.after_done == [] and events.stray_lines == []


def test_only_one_space_after_the_colon_is_dropped():
    assert parse_sse("data:x\n\ndata:  y\n\n").payloads == ["x", " y"]


def test_comments_and_known_fields_are_no_stray_lines():
    events = parse_sse(": keep-alive\nevent: message\nid: 3\nretry: 10\ndata: x\n\n")
    assert events.payloads == ["x"] and events.stray_lines == []


def test_a_line_that_is_no_sse_field_is_kept_as_stray():
    events = parse_sse("data: x\nbogus line\n\n")
    assert events.payloads == ["x"] and events.stray_lines == ["bogus line"]


def test_events_after_done_are_kept_apart():
    events = parse_sse("data: a\n\ndata: [DONE]\n\ndata: late\n\n")
    assert events.payloads == ["a"] and events.done and events.after_done == ["late"]


def test_an_event_without_its_closing_blank_line_counts_at_the_end():
    parser = SseParser()
    assert parser.feed("data: tail") is None
    assert parser.end() == "tail"
    assert parser.events.payloads == ["tail"]


def test_crlf_and_cr_end_lines_too():
    assert parse_sse("data: a\r\n\r\ndata: b\r\rdata: [DONE]\r\n\r\n").payloads == ["a", "b"]


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def _collect(*parts: bytes, cap: int = 1000) -> list[str | None]:
    return [line async for line in _lines(_chunks(*parts), cap)]


async def test_a_crlf_split_across_chunks_ends_one_line():
    assert await _collect(b"data: a\r", b"\n\r", b"\n") == ["data: a", ""]


async def test_a_character_split_across_chunks_is_decoded_whole():
    text = "data: é€\n".encode()
    assert await _collect(text[:7], text[7:]) == ["data: é€"]


async def test_more_bytes_than_the_cap_end_the_lines():
    assert await _collect(b"data: a\n", b"x" * 20, cap=10) == ["data: a", None]


# -- requests against a raw TCP server


Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[asyncio.Server, str]:
    async def wrapped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            await handler(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(wrapped, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


def _head(length: int | None = None, content_type: str = "application/json") -> bytes:
    size = f"content-length: {length}\r\n" if length is not None else "transfer-encoding: chunked\r\n"
    return f"HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\n{size}\r\n".encode()


async def test_a_body_over_the_cap_is_cut_while_streaming():
    sent = 0

    async def endless(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal sent
        writer.write(_head(10_000_000))
        for _ in range(1000):  # 10 MB offered; the client stops reading after its cap
            writer.write(b"x" * 10_000)
            sent += 10_000
            await writer.drain()

    server, url = await _serve(endless)
    transcript = Transcript(1, "t", "t")
    async with server, HttpClient(url, transcript, 10, body_cap=50_000) as http:
        reply = await http.get("/big")
    assert reply.status == 200 and reply.over_cap and not reply.is_json
    assert len(reply.raw) == 50_000 and "larger than 50000 bytes" in reply.text
    assert sent < 10_000_000
    assert [frame.direction for frame in transcript.frames] == ["sent", "received"]


async def test_a_trickling_body_meets_the_overall_deadline():
    async def trickle(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(1000))
        for _ in range(1000):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.05)  # each read is quick; the whole body is not

    server, url = await _serve(trickle)
    transcript = Transcript(1, "t", "t")
    async with server, HttpClient(url, transcript, 0.5) as http:
        with pytest.raises(NoReply) as caught:
            await http.exchange("GET", "/slow")
        reply = await http.request("GET", "/slow")
    assert caught.value.timeout == 0.5
    assert reply.status == 0 and reply.text == "no usable answer: the answer took longer than 0.5s"
    assert any(f.direction == "note" and "longer than 0.5s" in f.summary for f in transcript.frames)


async def test_bytes_that_are_not_http_are_malformed():
    async def garbage(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SSH-2.0-nothing like HTTP\r\n\r\n")
        await writer.drain()

    server, url = await _serve(garbage)
    transcript = Transcript(1, "t", "t")
    async with server, HttpClient(url, transcript, 5) as http:
        with pytest.raises(Malformed):
            await http.exchange("GET", "/")
    assert transcript.frames[-1].direction == "note"


async def test_an_unreachable_target_raises_with_its_transcript():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    transcript = Transcript(1, "t", "t")
    async with HttpClient(f"http://127.0.0.1:{port}", transcript, 5) as http:
        with pytest.raises(TargetUnreachable) as caught:
            await http.get("/health")
    assert caught.value.evidence is transcript
    assert [frame.direction for frame in transcript.frames] == ["sent", "note"]
    assert transcript.frames[-1].summary.startswith("could not connect")


async def test_json_is_parsed_only_under_a_json_content_type_when_asked():
    async def text_json(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(2, "text/plain") + b"{}")
        await writer.drain()

    server, url = await _serve(text_json)
    async with server:
        async with HttpClient(url, Transcript(1, "t", "t"), 5) as http:
            assert (await http.get("/")).is_json
        async with HttpClient(url, Transcript(1, "t", "t"), 5, json_when_declared=True) as http:
            assert not (await http.get("/")).is_json


async def test_a_stream_is_read_as_sse_events_and_recorded():
    async def sse(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = b'data: {"n": 1}\r\n\r\ndata: {"n": 2}\n\ndata: [DONE]\n\n'
        writer.write(_head(len(body), "text/event-stream") + body)
        await writer.drain()

    server, url = await _serve(sse)
    transcript = Transcript(1, "t", "t")
    async with server, HttpClient(url, transcript, 5) as http:
        stream = await http.stream({"stream": True}, "/chat")
    assert stream.status == 200 and stream.done and stream.chunks() == [{"n": 1}, {"n": 2}]
    assert [f.kind for f in transcript.frames] == ["http", "sse", "sse", "sse"]


async def test_a_stream_answered_with_json_keeps_the_answer():
    async def refuse(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        body = b'{"error": "no"}'
        writer.write(_head(len(body)) + body)
        await writer.drain()

    server, url = await _serve(refuse)
    async with server, HttpClient(url, Transcript(1, "t", "t"), 5) as http:
        stream = await http.stream({"stream": True}, "/chat")
    assert stream.error_reply is not None and stream.error_reply.error_message() == "no"
    assert stream.payloads == []
