"""Zoo faults for RLlink servers: the conforming reference server with one hook overridden each.

`ZOO` in `catalogue.py` says which clause the rllink suite must flag for
each class and in which dialect it runs.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import json
from typing import Any

import msgpack
import numpy as np

from checks.errors import Malformed
from checks.rllink.codec import encode, frame
from checks.rllink.reference import BadEpisodes, ReferenceServer, onnx_file

# ---------------------------------------------------------------- frames and bodies (write)


class SpacePaddedHeader(ReferenceServer):
    """Pads the length with spaces, as `str(n).rjust(8)` would: Python's int() reads it, a strict client does not."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        body = encode(message, self.dialect)[8:]
        writer.write(str(len(body)).rjust(8).encode() + body)
        await writer.drain()


class CharCountHeader(ReferenceServer):
    """Counts the characters of its (non-ASCII) JSON text instead of its bytes."""

    def config_reply(self) -> dict[str, Any]:
        return {**super().config_reply(), "trainer": "Übungsleiter für CartPole"}

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False)
        writer.write(str(len(text)).zfill(8).encode() + text.encode("utf-8"))
        await writer.drain()


class TrailingByte(ReferenceServer):
    """Counts a stray newline after each msgpack body into the frame."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(frame(encode(message, self.dialect)[8:] + b"\n"))
        await writer.drain()


class ShortByOneHeader(ReferenceServer):
    """Announces one byte fewer than its body holds (it leaves out the closing brace)."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        body = encode(message, self.dialect)[8:]
        writer.write(str(len(body) - 1).zfill(8).encode() + body)
        await writer.drain()


class TypeAsBin(ReferenceServer):
    """Packs `type` as bin (a msgpack library's raw default) instead of str."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message.get("type") == "PONG":
            writer.write(frame(msgpack.packb({"type": b"PONG"}, use_bin_type=True)))
            await writer.drain()
        else:
            await super().write(writer, message)


class JsonOnMsgpackPort(ReferenceServer):
    """Reads msgpack requests but answers in JSON (a half-migrated Ray 2.49 port)."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        writer.write(encode(message, "json"))
        await writer.drain()


class TopLevelArray(ReferenceServer):
    """Answers PING with a JSON array, `["PONG"]`."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message.get("type") == "PONG":
            writer.write(frame(b'["PONG"]'))
            await writer.drain()
        else:
            await super().write(writer, message)


class PingReply(ReferenceServer):
    """Answers PING with a type of its own, `PING_REPLY`."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        await super().write(writer, {"type": "PING_REPLY"} if message.get("type") == "PONG" else message)


class DoublePong(ReferenceServer):
    """Answers every PING twice."""

    async def write(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        await super().write(writer, message)
        if message.get("type") == "PONG":
            await super().write(writer, message)


# ---------------------------------------------------------------- SET_CONFIG


class ConfigAsStr(ReferenceServer):
    """Sends the pickled config as a str (latin-1 text) instead of bin."""

    def config_reply(self) -> dict[str, Any]:
        reply = super().config_reply()
        return {**reply, "config": reply["config"].decode("latin-1")}


class StepsAsString(ReferenceServer):
    """Sends env_steps_per_sample as the string "32"."""

    def config_reply(self) -> dict[str, Any]:
        return {**super().config_reply(), "env_steps_per_sample": str(self.fragment_length)}


# ---------------------------------------------------------------- SET_STATE: the json dialect's ONNX file


class OnnxBadBase64(ReferenceServer):
    """Sends the ONNX file with base64's URL-safe alphabet and no padding."""

    def state_reply(self) -> dict[str, Any]:
        reply = super().state_reply()
        packed = base64.b64decode(reply["onnx_file"])
        return {**reply, "onnx_file": base64.urlsafe_b64encode(packed).decode().rstrip("=") + "-_"}


class OnnxNotGzipped(ReferenceServer):
    """Base64-encodes the ONNX model without gzipping it."""

    def state_reply(self) -> dict[str, Any]:
        reply = super().state_reply()
        model = gzip.decompress(base64.b64decode(reply["onnx_file"]))
        return {**reply, "onnx_file": base64.b64encode(model).decode()}


class OnnxNotLoadable(ReferenceServer):
    """Gzips a torch-style state dict dump, not an ONNX model."""

    def state_reply(self) -> dict[str, Any]:
        dump = json.dumps({k: v.tolist() for k, v in self.weights.items()}).encode()
        return {**super().state_reply(), "onnx_file": base64.b64encode(gzip.compress(dump)).decode()}


class OnnxWrongLogits(ReferenceServer):
    """Exports a policy head with three logits for a Discrete(2) action space."""

    def state_reply(self) -> dict[str, Any]:
        weights = dict(self.weights)
        weights["pi.2.weight"] = np.vstack([weights["pi.2.weight"], weights["pi.2.weight"][:1]])
        weights["pi.2.bias"] = np.zeros(3, np.float32)
        return {**super().state_reply(), "onnx_file": onnx_file(weights)}


# ---------------------------------------------------------------- SET_STATE: the msgpack dialect's arrays


class ShortArrayData(ReferenceServer):
    """One rl_module array's `data` is four bytes short of prod(shape) x itemsize."""

    def state_reply(self) -> dict[str, Any]:
        reply = super().state_reply()
        weight = self.weights["pi.0.weight"]
        reply["state"]["rl_module"]["pi.0.weight"] = {
            b"nd": True,
            b"type": weight.dtype.str,
            b"kind": b"",
            b"shape": list(weight.shape),
            b"data": weight.tobytes()[:-4],
        }
        return reply


class EmptyModule(ReferenceServer):
    """Sends an empty state.rl_module (weights not exported yet)."""

    def state_reply(self) -> dict[str, Any]:
        reply = super().state_reply()
        reply["state"]["rl_module"] = {}
        return reply


# ---------------------------------------------------------------- EPISODES and ordering


class AcksEpisodes(ReferenceServer):
    """Acknowledges a bare EPISODES with a PONG."""

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        await super().answer(writer, message)
        if message["type"] == "EPISODES":
            await self.write(writer, {"type": "PONG"})


class PongOvertakes(ReferenceServer):
    """Serves each request in its own task and takes 0.2 s over SET_STATE, so a pipelined PING overtakes it."""

    later: set[asyncio.Task[None]] | None = None

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message["type"] in ("GET_STATE", "EPISODES_AND_GET_STATE"):
            if self.later is None:
                self.later = set()
            task = asyncio.get_running_loop().create_task(self._later(writer, message))
            self.later.add(task)
            task.add_done_callback(self.later.discard)
        else:
            await super().answer(writer, message)

    async def _later(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        await asyncio.sleep(0.2)
        await super().answer(writer, message)


class NeedsTwoFragments(ReferenceServer):
    """Advertises its fragment length but trains on twice as many steps; a short batch is held, like RLlib's."""

    async def answer(self, writer: asyncio.StreamWriter, message: dict[str, Any]) -> None:
        if message["type"] != "EPISODES_AND_GET_STATE":
            await super().answer(writer, message)
            return
        self.queued += self.count_steps(message)
        if self.queued < 2 * self.fragment_length:
            await self.stopped.wait()  # like RLlib's listener: blocked on a state that never comes, reading nothing
        self.train()
        await self.write(writer, self.state_reply())


# ---------------------------------------------------------------- weights_seq_no


class CountsDown(ReferenceServer):
    """weights_seq_no counts down from 100: a version number read as `steps left`."""

    def state_reply(self) -> dict[str, Any]:
        reply = super().state_reply()
        holder = reply if self.dialect == "json" else reply["state"]
        holder["weights_seq_no"] = 100 - self.seq
        return reply


class SeqPerConnection(ReferenceServer):
    """Numbers weights per connection: every new client sees weights_seq_no start again at 0."""

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.seq = 0
        await super().handle(reader, writer)


class StuckSeq(ReferenceServer):
    """Answers every batch, but its trainer never syncs: weights_seq_no stays 0."""

    def train(self) -> None:
        super().train()
        self.seq = 0


class SkipsSeq(ReferenceServer):
    """Bumps weights_seq_no by 2 per batch (it counts the state sync too)."""

    def train(self) -> None:
        super().train()
        self.seq += 1


# ---------------------------------------------------------------- malformed frames


class HangsOnBadHeader(ReferenceServer):
    """Takes a header it cannot read as "more to come" and waits on that connection forever."""

    async def read_message(self, reader: asyncio.StreamReader) -> dict[str, Any]:
        try:
            return await super().read_message(reader)
        except Malformed:
            await self.stopped.wait()
            raise


class Muted(ReferenceServer):
    """Once `mute`, its listener thread is dead: connections are accepted, nothing is answered."""

    mute = False

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.mute:
            self.connections.add(writer)
            await self.stopped.wait()
            return
        await super().handle(reader, writer)

    async def recycle_listener(self) -> None:
        if not self.mute:
            await super().recycle_listener()


class WedgesOnGarbage(Muted):
    """Its listener dies on the first malformed frame instead of recycling."""

    async def recycle_listener(self) -> None:
        self.mute = True


class WedgesOnBadEpisodes(Muted):
    """RLlib's own fault: a semantically bad EPISODES kills the listener; the port stays open and mute."""

    def count_steps(self, body: dict[str, Any]) -> int:
        try:
            return super().count_steps(body)
        except BadEpisodes:
            self.mute = True
            raise


class ClosesForGood(ReferenceServer):
    """After its first error it stops listening and never listens again (its accept loop crashed)."""

    async def recycle_listener(self) -> None:
        if self.server is not None:
            self.server.close()


class DiesOnBadEpisodes(ReferenceServer):
    """A bad EPISODES crashes the process: every connection drops and connections are refused."""

    dead = False

    def count_steps(self, body: dict[str, Any]) -> int:
        try:
            return super().count_steps(body)
        except BadEpisodes:
            self.dead = True
            raise

    async def recycle_listener(self) -> None:
        if not self.dead:
            await super().recycle_listener()
            return
        if self.server is not None:
            self.server.close()
        for writer in list(self.connections):
            writer.close()


# ---------------------------------------------------------------- a second client


class OneClientAtATime(ReferenceServer):
    """RLlib's listen(1): a second connection is accepted into the backlog and never answered while one is served."""

    busy: asyncio.Lock | None = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.busy is None:
            self.busy = asyncio.Lock()
        async with self.busy:
            await super().handle(reader, writer)
