"""Bytes through the tap are the bytes sent: SHA-256 of each direction, direct and tapped, for a PlugRL
exchange with a 2.25 MiB observation frame (fragments and a ping included) and a long SSE stream; closes
reach the other side with their code and reason."""

from __future__ import annotations

import asyncio
import hashlib
import os
import struct

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from checks.plugrl.codec import pack
from checks.tap import openai, plugrl
from tests.checks.tap.conftest import tapping

OBSERVATION_BYTES = 9 * 1024 * 1024 // 4  # 2.25 MiB
SSE_EVENTS = 3000


def ws_frame(payload: bytes, opcode: int = 2, fin: bool = True, key: bytes = b"") -> bytes:
    head = bytes([(0x80 if fin else 0) | opcode])
    mask = 0x80 if key else 0
    size = len(payload)
    if size < 126:
        head += bytes([mask | size])
    elif size < 1 << 16:
        head += bytes([mask | 126]) + struct.pack("!H", size)
    else:
        head += bytes([mask | 127]) + struct.pack("!Q", size)
    if not key:
        return head + payload
    masked = bytes(b ^ key[i % 4] for i, b in enumerate(payload[:64])) if size <= 64 else _xor(payload, key)
    return head + key + masked


def _xor(data: bytes, key: bytes) -> bytes:
    pad = (-len(data)) % 4
    words = np.frombuffer(data + b"\0" * pad, dtype=np.uint32) ^ np.frombuffer(key, dtype=np.uint32)[0]
    return words.tobytes()[: len(data)]


def plugrl_streams() -> tuple[list[bytes], list[bytes]]:
    """(client writes, server writes): a handshake, metadata, a 2.25 MiB infer, its action, a fragmented
    feedback, a ping, and a close each way."""
    key = os.urandom(4)
    observation = np.arange(OBSERVATION_BYTES // 4, dtype=np.float32).reshape(1, -1)
    infer = pack(
        {
            "message_type": "infer",
            "data": {"state": observation},
            "env_indices": np.array([0]),
            "step_ids": np.array([0]),
        }
    )
    feedback = pack(
        {
            "message_type": "feedback",
            "data": {"state": observation[:, :8]},
            "env_indices": np.array([0]),
            "rewards": np.zeros(1, np.float32),
            "terminated": np.zeros(1, bool),
            "truncated": np.zeros(1, bool),
        }
    )
    half = len(feedback) // 2
    client = [
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        ws_frame(infer, key=key),
        ws_frame(b"ping", opcode=9, key=key),
        ws_frame(feedback[:half], fin=False, key=key) + ws_frame(feedback[half:], opcode=0, key=key),
        ws_frame(struct.pack("!H", 1000) + b"done", opcode=8, key=key),
    ]
    metadata = pack({"message_type": "metadata", "data": {"protocol_version": 1, "action_horizon": 2}})
    action = pack(
        {"message_type": "action", "data": {"env_ids": np.array([0]), "action": np.zeros((2, 1, 3), np.float32)}}
    )
    server = [
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n" + ws_frame(metadata),
        ws_frame(action),
        ws_frame(struct.pack("!H", 1000) + b"done", opcode=8),
    ]
    return client, server


def sse_streams() -> tuple[list[bytes], list[bytes]]:
    body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    request += b"Authorization: Bearer sk-secret\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = [head]
    for n in range(SSE_EVENTS):
        delta = {"role": "assistant", "content": ""} if n == 0 else {"content": f"t{n} "}
        finish = "stop" if n == SSE_EVENTS - 1 else None
        event = (
            '{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", '
            f'"choices": [{{"index": 0, "delta": {_json(delta)}, "finish_reason": {_json(finish)}}}]}}'
        )
        data = f"data: {event}\n\n".encode()
        chunks.append(b"%x\r\n" % len(data) + data + b"\r\n")
    done = b"data: [DONE]\n\n"
    chunks.append(b"%x\r\n" % len(done) + done + b"\r\n0\r\n\r\n")
    return [request], chunks


def _json(value: object) -> str:
    import json

    return json.dumps(value)


async def exchange(port: int, client: list[bytes]) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for piece in client:
        writer.write(piece)
        await writer.drain()
    writer.write_eof()
    received = await reader.read()
    writer.close()
    return received


async def raw_server(server_writes: list[bytes], received: list[bytes]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def send() -> None:
            for piece in server_writes:
                writer.write(piece)
                await writer.drain()
            writer.write_eof()

        sending = asyncio.create_task(send())
        received.append(await reader.read())
        await sending
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def digest(data: bytes | list[bytes]) -> str:
    return hashlib.sha256(data if isinstance(data, bytes) else b"".join(data)).hexdigest()


@pytest.mark.parametrize("streams", ["plugrl", "sse"])
async def test_each_direction_through_the_tap_is_byte_identical_to_direct(streams):
    client, server_writes = plugrl_streams() if streams == "plugrl" else sse_streams()
    spec = plugrl.spec() if streams == "plugrl" else openai.spec()
    received: list[bytes] = []
    server = await raw_server(server_writes, received)
    port = server.sockets[0].getsockname()[1]
    try:
        direct_down = await exchange(port, client)
        async with tapping(spec, f"http://127.0.0.1:{port}") as tapped:
            tapped_port = int(tapped.url.rsplit(":", 1)[1])
            tapped_down = await exchange(tapped_port, client)
            while len(received) < 2:  # the client's last bytes may still be on their way when it has read all
                await asyncio.sleep(0.01)
    finally:
        server.close()
        await server.wait_closed()
    assert digest(direct_down) == digest(tapped_down) == digest(server_writes)
    assert [len(r) for r in received] == [len(b"".join(client))] * 2
    assert digest(received[0]) == digest(received[1]) == digest(client)
    assert tapped.run.relay.stats.reader_faults == []
    if streams == "plugrl":  # the copies were read as frames: the big infer and the fragmented feedback judged
        assert tapped.ledger.tallies["plugrl-client.2.binary-frames"].judged == 2
        assert tapped.ledger.tallies["plugrl.2.binary-frames"].judged == 2  # metadata and action
        assert tapped.ledger.tallies["plugrl-client.4.2.alternation"].violated == 0
    else:
        tally = tapped.ledger.tallies["openai.stream.format"]
        assert (tally.judged, tally.violated) == (1, 0)
        assert all("sk-secret" not in line for log in tapped.ledger.logs.values() for line in log.recent)


@pytest.mark.parametrize("closer", ["server", "client"])
async def test_a_close_reaches_the_other_side_with_its_code_and_reason(closer):
    seen: list[tuple[int | None, str | None]] = []

    async def handle(ws: ServerConnection) -> None:
        if closer == "server":
            await ws.close(4001, "server says bye")
            return
        try:
            await ws.recv()
        except ConnectionClosed as closed:
            seen.append((closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else (None, None))

    async with serve(handle, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with tapping(plugrl.spec(), f"ws://127.0.0.1:{port}") as tapped:
            async with connect(tapped.url, compression=None) as ws:
                if closer == "client":
                    await ws.close(4002, "client says bye")
                    await asyncio.sleep(0.1)
                else:
                    with pytest.raises(ConnectionClosed) as info:
                        await ws.recv()
                    assert info.value.rcvd is not None
                    seen.append((info.value.rcvd.code, info.value.rcvd.reason))
    expected = (4001, "server says bye") if closer == "server" else (4002, "client says bye")
    assert seen == [expected]
