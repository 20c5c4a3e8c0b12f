"""One client connection, served as RLlib's external-inference server would and judged on every frame.

The frame clauses (header, body, type) are decided on each frame the client
sends; a frame RLlib could not read ends the conversation, as it ends RLlib's.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from checks.core import PhaseStopped, Transcript, truncate
from checks.decision import Decision, missed, record
from checks.errors import Malformed
from checks.listen import Accepted, Stream
from checks.rllink.codec import HEADER_SIZE, Dialect, NotAMessage, decode_body, encode, sniff_dialect, strict_length
from checks.rllink.link import describe, eof, read_exactly, reset
from checks.rllink_client import judging
from checks.rllink_client.config_pickle import config_pickle
from checks.rllink_client.options import Ctx

FRAME_CAP = 64 * 1024 * 1024


class Conversation:
    def __init__(self, ctx: Ctx, accepted: Accepted[Stream]) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.accepted = accepted
        self.reader, self.writer = accepted.connection.reader, accepted.connection.writer
        self.transcript: Transcript = ctx.report.transcript(f"client from {accepted.peer}")
        self.messages = 0
        self.config_sent = self.state_sent = False

    @property
    def dialect(self) -> Dialect:
        assert self.ctx.state.dialect is not None
        return self.ctx.state.dialect

    def stopped(self, why: str) -> PhaseStopped:
        return PhaseStopped(why, self.transcript)

    # -- reading

    async def _read(self, size: int, timeout: float) -> bytes:
        return await read_exactly(self.reader, size, timeout, self.transcript)

    def _bad_frame(self, clause_id: str, expected: str, actual: str) -> PhaseStopped:
        return self._closes_on(missed(clause_id, expected=expected, actual=actual))

    def _closes_on(self, miss: Decision) -> PhaseStopped:
        record(self.report, miss, self.transcript)
        return self.stopped(f"RLlib would close the connection on this frame: {truncate(miss.actual, 200)}")

    async def read(self, timeout: float | None = None) -> dict[str, Any]:
        """The client's next message, its frame judged. NoReply / PeerClosed when none comes."""
        header = await self._read(HEADER_SIZE, timeout or self.ctx.timeout)
        try:
            length = strict_length(header, FRAME_CAP)
        except Malformed as exc:
            self.transcript.received("binary", len(header), f"header {header!r}")
            raise self._bad_frame(
                "rllink-client.frame.header", "8 ASCII digits, the body's byte length", str(exc)
            ) from None
        body = await self._read(length, self.ctx.timeout)
        self._settle_dialect(body)
        try:
            message = decode_body(body, self.dialect)
        except NotAMessage as exc:
            self.transcript.received("binary", len(body) + HEADER_SIZE, f"<{exc}>")
            raise self._bad_frame("rllink-client.frame.type", "a map with a str `type`", str(exc)) from None
        except Malformed as exc:
            self.transcript.received("binary", len(body) + HEADER_SIZE, f"<undecodable: {truncate(str(exc), 120)}>")
            raise self._bad_frame(
                "rllink-client.frame.header",
                f"the header's {length} bytes holding one {self.dialect} map, nothing more",
                str(exc),
            ) from None
        self.transcript.received("binary", len(body) + HEADER_SIZE, describe(message))
        self.report.passed("rllink-client.frame.header", actual="8-digit byte-length headers, one map per body")
        kind = judging.request_type(message["type"])
        if kind.outcome != "pass":
            raise self._closes_on(kind)
        record(self.report, kind)
        self.messages += 1
        return message

    def _settle_dialect(self, body: bytes) -> None:
        sniffed = sniff_dialect(body)
        if self.ctx.state.dialect is None:
            wanted = self.ctx.options.dialect
            self.ctx.state.dialect = (sniffed or "msgpack") if wanted == "auto" else wanted
            self.report.info("rllink-client.dialect", actual=f"{self.ctx.state.dialect} (first body byte {body[:1]!r})")
        if sniffed is not None and sniffed != self.ctx.state.dialect:
            raise self._bad_frame(
                "rllink-client.frame.header",
                f"a {self.ctx.state.dialect} body, the dialect this run serves",
                f"a {sniffed} body",
            )

    async def pipelined(self) -> bool:
        """Whether the client sends anything during the reply delay (it must wait for the reply)."""
        try:
            data = await asyncio.wait_for(self.reader.read(HEADER_SIZE), self.ctx.options.reply_delay)
        except TimeoutError:
            return False
        except (ConnectionError, OSError):
            raise reset() from None
        if not data:
            raise eof()
        self.transcript.received("binary", len(data), f"bytes before the reply: {truncate(repr(data), 60)}")
        return True

    async def before_reply(self, request: str) -> None:
        if await self.pipelined():
            raise self._bad_frame(
                "rllink-client.req-resp.waits",
                f"nothing until the reply to {request}",
                f"more bytes within {self.ctx.options.reply_delay:g}s of {request}, before its reply",
            )
        self.report.passed("rllink-client.req-resp.waits", actual="waited for each reply")

    # -- replies

    async def send(self, message: dict[str, Any]) -> None:
        data = encode(message, self.dialect)
        self.transcript.sent("binary", len(data), describe(message))
        try:
            self.writer.write(data)
            await asyncio.wait_for(self.writer.drain(), self.ctx.timeout)
        except TimeoutError:
            raise self.stopped("sending to the client did not finish in time") from None
        except (ConnectionError, OSError):
            raise reset() from None

    def config_reply(self) -> dict[str, Any]:
        options = self.ctx.options
        if self.dialect == "json":
            return {"type": "SET_CONFIG", "env_steps_per_sample": options.fragment_length, "force_on_policy": True}
        return {
            "type": "SET_CONFIG",
            "config": config_pickle(options.obs_dim, options.actions, options.fragment_length),
        }

    def state_reply(self) -> dict[str, Any]:
        policy = self.ctx.state.policy
        assert policy is not None
        if self.dialect == "json":
            return {"type": "SET_STATE", "onnx_file": policy.onnx(), "weights_seq_no": policy.seq}
        return {"type": "SET_STATE", "state": {"rl_module": policy.module_state(), "weights_seq_no": policy.seq}}

    async def answer(self, message: dict[str, Any]) -> None:
        """The reply to a reply-bearing request, after the pipelining watch."""
        kind = message["type"]
        await self.before_reply(kind)
        if kind == "PING":
            await self.send({"type": "PONG"})
        elif kind == "GET_CONFIG":
            await self.send(self.config_reply())
            self.config_sent = True
        else:
            await self.send(self.state_reply())
            self.state_sent = True

    async def close(self) -> None:
        self.transcript.note("checker closed the connection")
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 1.0)
        self.accepted.released.set()
