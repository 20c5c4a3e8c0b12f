"""One client connection, served as RLlib's external-inference server would: its frames read, the replies sent.

The conversation reads the client's frames and sends RLlib's replies; it returns
what each frame held, or raises `FrameFault` for a frame RLlib could not read.
The frame clauses are decided by `checks.rllink_client.judging` (see `drive`).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, NamedTuple

from checks.core import PhaseStopped, Transcript, truncate
from checks.errors import CheckError, Malformed
from checks.listen import Accepted, Stream
from checks.rllink.codec import HEADER_SIZE, Dialect, NotAMessage, decode_body, encode, sniff_dialect, strict_length
from checks.rllink.link import describe, eof, read_exactly, reset
from checks.rllink_client.config_pickle import config_pickle
from checks.rllink_client.judging import FramePart
from checks.rllink_client.options import Ctx

FRAME_CAP = 64 * 1024 * 1024


class FrameFault(CheckError):
    """A frame RLlib could not read: the part at fault (header, body, type or dialect) and what was there."""

    def __init__(self, part: FramePart, seen: str, *, length: int, dialect: str, settled: str | None) -> None:
        super().__init__(seen)
        self.part, self.seen, self.length, self.dialect, self.settled = part, seen, length, dialect, settled


class Request(NamedTuple):
    """A message the client sent; `settled`: the run's dialect and why, when this frame's body fixed it."""

    message: dict[str, Any]
    settled: str | None


class Conversation:
    def __init__(self, ctx: Ctx, accepted: Accepted[Stream]) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.accepted = accepted
        self.reader, self.writer = accepted.connection.reader, accepted.connection.writer
        self.transcript: Transcript = ctx.report.transcript(f"client from {accepted.peer}")
        self.messages = 0
        self.config_sent = self.state_sent = False
        self.bare_episodes = 0  # EPISODES sent without a request for weights

    @property
    def dialect(self) -> Dialect:
        assert self.ctx.state.dialect is not None
        return self.ctx.state.dialect

    def stopped(self, why: str) -> PhaseStopped:
        return PhaseStopped(why, self.transcript)

    # -- reading

    async def _read(self, size: int, timeout: float) -> bytes:
        return await read_exactly(self.reader, size, timeout, self.transcript)

    async def read(self, timeout: float | None = None) -> Request:
        """The client's next message and what its frame showed; `FrameFault` for a frame RLlib could not read,
        NoReply / PeerClosed when none comes."""
        header = await self._read(HEADER_SIZE, timeout or self.ctx.timeout)
        try:
            length = strict_length(header, FRAME_CAP)
        except Malformed as exc:
            self.transcript.received("binary", len(header), f"header {header!r}")
            raise FrameFault("header", str(exc), length=0, dialect="", settled=None) from None
        body = await self._read(length, self.ctx.timeout)
        settled = self._settle_dialect(body)
        sniffed = sniff_dialect(body)
        if sniffed is not None and sniffed != self.dialect:
            raise FrameFault("dialect", f"a {sniffed} body", length=length, dialect=self.dialect, settled=settled)
        try:
            message = decode_body(body, self.dialect)
        except NotAMessage as exc:
            self.transcript.received("binary", len(body) + HEADER_SIZE, f"<{exc}>")
            raise FrameFault("type", str(exc), length=length, dialect=self.dialect, settled=settled) from None
        except Malformed as exc:
            self.transcript.received("binary", len(body) + HEADER_SIZE, f"<undecodable: {truncate(str(exc), 120)}>")
            raise FrameFault("body", str(exc), length=length, dialect=self.dialect, settled=settled) from None
        self.transcript.received("binary", len(body) + HEADER_SIZE, describe(message))
        return Request(message, settled)

    def _settle_dialect(self, body: bytes) -> str | None:
        """Fix the run's dialect on its first body: what it is and why; None when it was fixed already."""
        if self.ctx.state.dialect is not None:
            return None
        wanted = self.ctx.options.dialect
        self.ctx.state.dialect = (sniff_dialect(body) or "msgpack") if wanted == "auto" else wanted
        return f"{self.ctx.state.dialect} (first body byte {body[:1]!r})"

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

    async def reply(self, message: dict[str, Any]) -> None:
        """The reply to a reply-bearing request, as RLlib's server sends it."""
        kind = message["type"]
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
