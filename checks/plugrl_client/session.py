"""One client connection, driven as a PlugRL server would: the wire, with the judges' decisions recorded.

The passive clauses (binary frames, msgpack maps, array form, alternation,
message forms) are decided on each frame the client sends and the probe clauses
(SPEC 8.1) on each infer and feedback, by the judges in
`checks.plugrl_client.judging`; the session sends, receives, records, and keeps
what the judges need to know of the run.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from checks.core import Transcript
from checks.decision import Decision, Judged, record
from checks.errors import NoReply, PeerClosed, PhaseStopped
from checks.evidence import summarize
from checks.listen import Accepted
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.protocol import GOING_AWAY, REUSE_FEATURE, STOP_REASON
from checks.plugrl_client import judging
from checks.plugrl_client.judging import Held
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.probe import probe_chunk

METADATA_DELAY = 0.3  # seconds the checker stays silent, to catch a client that speaks first
PADDING_BYTES = 2 * 1024 * 1024
ValueT = TypeVar("ValueT")


class Session:
    """One accepted client connection: the wire, and what the judges need to know of it and of the run."""

    def __init__(
        self, ctx: Ctx, accepted: Accepted[ServerConnection], *, reuse_offered: bool, reconnected: bool
    ) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.options = ctx.options
        self.connection = accepted.connection
        self.accepted = accepted
        self.transcript: Transcript = ctx.report.transcript(f"client from {accepted.peer}")
        self.reuse_offered = reuse_offered
        self.reconnected = reconnected
        if not reconnected:  # a (re)started client: its envs begin again
            ctx.state.last_t.clear()
            ctx.state.ended.clear()
            ctx.state.lost.clear()
        self.holding: dict[int, Held] = {}
        self.held_obs: dict[int, tuple[int, bool]] = {}  # env -> (t, ended) of its last feedback here
        self.expect = "infer"
        self.feedbacks = 0
        self.reused_rows = 0
        self.messages = 0
        self.infer_t: dict[int, int] = {}

    # -- transport

    async def send(self, data: bytes | str, summary: str) -> None:
        self.transcript.sent("text" if isinstance(data, str) else "binary", len(data), summary)
        try:
            await asyncio.wait_for(self.connection.send(data), timeout=self.ctx.timeout)
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        except TimeoutError:
            raise PhaseStopped("sending to the client did not finish in time", self.transcript) from None

    async def recv(self, timeout: float | None = None) -> bytes | str:
        try:
            data = await asyncio.wait_for(self.connection.recv(), timeout=timeout or self.ctx.timeout)
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        except TimeoutError:
            self.transcript.note(f"nothing arrived within {timeout or self.ctx.timeout:g}s")
            raise NoReply("the client sent nothing in time", timeout) from None
        kind = "text" if isinstance(data, str) else "binary"
        self.transcript.received(
            kind, len(data), summarize(data[:200]) if isinstance(data, str) else f"{len(data)} bytes"
        )
        return data

    def _closed(self, exc: ConnectionClosed) -> PeerClosed:
        received = exc.rcvd
        code, reason = (received.code, received.reason) if received is not None else (None, "")
        by_client = exc.rcvd_then_sent or exc.sent is None
        self.transcript.closed(code, reason, "client" if by_client else "checker")
        if not by_client:
            return PeerClosed(by="checker", code=code, reason=reason)
        return PeerClosed(by="peer" if received is not None else "network", code=code, reason=reason)

    async def close(self, reason: str) -> None:
        self.transcript.closed(GOING_AWAY, reason, "checker")
        try:
            await asyncio.wait_for(self.connection.close(GOING_AWAY, reason), timeout=min(self.ctx.timeout, 2.0))
        except Exception:
            self.connection.transport.abort()
        self.accepted.released.set()

    def stopped(self, why: str) -> PhaseStopped:
        return PhaseStopped(why, self.transcript)

    def record(self, decisions: list[Decision]) -> bool:
        """Record decisions with this session's transcript; whether none missed."""
        return record(self.report, decisions, self.transcript)

    def judged(self, judged: Judged[ValueT]) -> ValueT:
        """Record a judge's decisions; stop the phase where the judge says the exchange cannot go on."""
        self.record(judged.decisions)
        if judged.stop is not None:
            raise self.stopped(judged.stop)
        return judged.value

    # -- handshake

    async def open(self, padded: bool) -> None:
        """Judge the handshake, stay silent a moment, then send the metadata."""
        offered = self.connection.request.headers.get_all("Sec-WebSocket-Extensions") if self.connection.request else []
        self.record([judging.no_compression(offered)])
        early: bytes | str | None = None
        try:
            early = await self.recv(METADATA_DELAY)
        except NoReply:
            pass  # the silence wanted
        self.judged(judging.metadata_first(early, METADATA_DELAY))
        data: dict[str, Any] = {
            "protocol_version": 1,
            "server": "rlconform plugrl-client",
            "action_horizon": self.options.horizon,
            "action_dim": self.options.action_dim,
        }
        if self.reuse_offered:
            data["features"] = [REUSE_FEATURE]
        if padded:
            data["conformance_padding"] = "x" * PADDING_BYTES
        await self.send(pack({"message_type": "metadata", "data": data}), summarize({"metadata": list(data)}))

    # -- frames

    async def message(self, timeout: float | None = None) -> dict[str, Any]:
        """The client's next message, judged as a frame, a map and a step of the alternation."""
        data = await self.recv(timeout)
        self.messages += 1
        decoded: dict[str, Any] | CodecError | None = None
        if not isinstance(data, str):
            try:
                decoded = unpack(data)
            except CodecError as exc:
                decoded = exc
        message = self.judged(judging.frame(data, decoded))
        assert message is not None
        kind = message["message_type"]
        first_after_reconnect = self.messages == 1 and self.reconnected
        stale = judging.stale_envs(message, self.ctx.state.lost) if first_after_reconnect else []
        self.judged(judging.sequence(kind, self.expect, first_after_reconnect, stale))
        self.expect = "feedback" if kind == "infer" else "infer"
        return message

    # -- infer

    async def infer(self, timeout: float | None = None) -> list[int]:
        """Receive and judge an infer; return its env indices (the action is not yet sent)."""
        message = await self.message(timeout)
        held = {env: ended for env, (_, ended) in self.held_obs.items()}
        reading = self.judged(judging.infer_message(message, reuse_offered=self.reuse_offered, held=held))
        self.reused_rows += sum(reading.reuse)
        sent_envs = reading.sent_envs
        probe = self.judged(judging.probe_observation(message["data"], len(sent_envs), self.options.action_dim))
        assert probe is not None
        sent_t = dict(zip(sent_envs, probe.t, strict=True))
        envs = reading.envs
        self.infer_t = {env: sent_t[env] if env in sent_t else self.held_obs[env][0] for env in envs}
        state = self.ctx.state
        self.record(
            judging.infer_continuity(
                envs, self.infer_t, self.holding, state.last_t, state.ended, state.lost, self.reconnected
            )
        )
        state.lost.difference_update(envs)
        return envs

    async def answer(self, envs: list[int]) -> None:
        chunk = probe_chunk(envs, self.options.horizon, self.options.action_dim, self.options.action_dtype)
        for row, env in enumerate(envs):
            self.holding[env] = Held(chunk[:, row, :], self.infer_t[env])
        message = {"message_type": "action", "data": {"env_ids": np.asarray(envs, dtype=np.int64), "action": chunk}}
        await self.send(pack(message), f"action {chunk.dtype.str} {list(chunk.shape)} for envs {envs[:8]}")

    # -- feedback

    async def feedback(self) -> None:
        message = await self.message()
        reading = self.judged(judging.feedback_message(message))
        assert reading is not None
        action_dim = self.options.action_dim
        probe = self.judged(judging.observation(message["data"]["obs"], len(reading.envs), "feedback", action_dim))
        assert probe is not None
        self.feedbacks += 1
        state = self.ctx.state
        for row, env in enumerate(reading.envs):
            held = self.holding.pop(env, None)
            self.record([judging.feedback_env(env, held is not None, stale=self.reconnected and env in state.lost)])
            if held is None:
                continue
            terminated, truncated = bool(reading.terminated[row]), bool(reading.truncated[row])
            t = probe.t[row]
            flags = (terminated, truncated)
            decisions = judging.feedback_row(
                env, held, t, float(reading.rewards[row]), probe.applied[row], flags, self.options.horizon
            )
            self.record(decisions)
            state.last_t[env] = t
            state.ended[env] = terminated or truncated
            self.held_obs[env] = (t, terminated or truncated)

    # -- ends

    async def stop(self) -> None:
        """End the run for this client, as a server does: 1001 plugrl-server-stop."""
        await self.close(STOP_REASON)

    def lose_held(self) -> None:
        """The connection ended: every action still held is from an earlier connection now."""
        self.ctx.state.lost.update(self.holding)
