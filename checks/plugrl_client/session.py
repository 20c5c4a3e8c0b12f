"""One client connection, driven as a PlugRL server would and judged on every frame.

The passive clauses (binary frames, msgpack maps, array form, alternation,
message forms) are decided on each frame the client sends; the probe clauses
(SPEC 8.1) on each infer and feedback, against what this run sent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from checks.core import NoReply, PhaseStopped, Transcript, summarize
from checks.listen import Accepted
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.protocol import GOING_AWAY, REUSE_FEATURE, STOP_REASON
from checks.plugrl.validation import ProtocolError, check_feedback, index_array, observation_rows
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.probe import describe_applied, episode_length, probe_chunk, probe_states

METADATA_DELAY = 0.3  # seconds the checker stays silent, to catch a client that speaks first
PADDING_BYTES = 2 * 1024 * 1024


class ClientClosed(Exception):
    """The client closed the connection (or it dropped)."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"the client closed the connection (code {code}, reason {reason!r})")
        self.code = code
        self.reason = reason


@dataclass
class Held:
    """An env's outstanding chunk: its [H, d] slice, and the t its infer reported."""

    chunk: np.ndarray
    t0: int


class Session:
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
        self._last_a = np.zeros((0, 1))

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

    def _closed(self, exc: ConnectionClosed) -> ClientClosed:
        received = exc.rcvd
        code, reason = (received.code, received.reason) if received is not None else (None, "")
        self.transcript.closed(code, reason, "client" if exc.rcvd_then_sent or exc.sent is None else "checker")
        return ClientClosed(code, reason)

    async def close(self, reason: str) -> None:
        self.transcript.closed(GOING_AWAY, reason, "checker")
        try:
            await asyncio.wait_for(self.connection.close(GOING_AWAY, reason), timeout=min(self.ctx.timeout, 2.0))
        except Exception:
            self.connection.transport.abort()
        self.accepted.released.set()

    def stopped(self, why: str) -> PhaseStopped:
        return PhaseStopped(why, self.transcript)

    # -- handshake

    async def open(self, padded: bool) -> None:
        """Judge the handshake, stay silent a moment, then send the metadata."""
        offered = self.connection.request.headers.get_all("Sec-WebSocket-Extensions") if self.connection.request else []
        deflate = any("permessage-deflate" in value for value in offered)
        self.report.check(
            not deflate,
            "plugrl-client.1.1.no-compression",
            expected="no permessage-deflate offer",
            actual=f"offered {', '.join(offered)}" if deflate else "none offered",
            evidence=self.transcript,
        )
        try:
            early = await self.recv(METADATA_DELAY)
        except NoReply:
            self.report.passed("plugrl-client.5.1.metadata-first", actual="silent until the metadata")
        else:
            self.report.failed(
                "plugrl-client.5.1.metadata-first",
                expected="nothing before the metadata",
                actual=f"a {len(early)}-byte frame {METADATA_DELAY}s after the handshake, before the metadata",
                evidence=self.transcript,
            )
            raise self.stopped("the client spoke before the metadata")
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
        if isinstance(data, str):
            self.report.failed(
                "plugrl-client.2.binary-frames",
                expected="binary frames",
                actual=f"a text frame: {summarize(data[:120])}",
                evidence=self.transcript,
            )
            raise self.stopped("the client sent a text frame")
        self.report.passed("plugrl-client.2.binary-frames")
        try:
            message = unpack(data)
        except CodecError as exc:
            clause = "plugrl-client.3.2.ndarray-form" if exc.part == "array" else "plugrl-client.2.msgpack-map"
            self.report.failed(clause, expected="a valid PlugRL frame", actual=str(exc), evidence=self.transcript)
            raise self.stopped(f"undecodable frame: {exc}") from None
        self.report.passed("plugrl-client.3.2.ndarray-form")
        kind = message.get("message_type")
        if kind not in ("infer", "feedback"):
            self.report.failed(
                "plugrl-client.2.msgpack-map",
                expected="message_type 'infer' or 'feedback', a str",
                actual=f"message_type {kind!r}"[:200],
                evidence=self.transcript,
            )
            raise self.stopped("a message with no valid message_type")
        self.report.passed("plugrl-client.2.msgpack-map")
        if self.messages == 1 and self.reconnected:
            if not self.report.check(
                kind == "infer",
                "plugrl-client.7.6.fresh-infer-after-reconnect",
                expected="an infer first on the new connection",
                actual=f"a {kind} first",
                evidence=self.transcript,
            ):
                self._stale_feedback(message)
                raise self.stopped("the reconnected client did not start with an infer")
        if kind != self.expect:
            self.report.failed(
                "plugrl-client.4.2.alternation",
                expected=f"a {self.expect}",
                actual=f"a {kind}",
                evidence=self.transcript,
            )
            raise self.stopped(f"expected a {self.expect}, received a {kind}")
        self.report.passed("plugrl-client.4.2.alternation")
        self.expect = "feedback" if kind == "infer" else "infer"
        return message

    def _stale_feedback(self, message: dict[str, Any]) -> None:
        envs = message.get("env_indices")
        named = set(envs.reshape(-1).tolist()) if isinstance(envs, np.ndarray) else set()
        stale = sorted(named & self.ctx.state.lost)
        if self.reconnected and stale:
            self.report.failed(
                "plugrl-client.7.6.no-stale-feedback",
                expected="no feedback for actions of an earlier connection",
                actual=f"feedback for envs {stale[:8]} from the last connection",
                evidence=self.transcript,
            )

    # -- infer

    async def infer(self, timeout: float | None = None) -> list[int]:
        """Receive and judge an infer; return its env indices (the action is not yet sent)."""
        message = await self.message(timeout)
        envs = self._infer_envs(message)
        reuse = self._reuse_mask(message, envs)
        sent_envs = [env for env, reused in zip(envs, reuse, strict=True) if not reused]
        t_rows = self._observation(message["data"], len(sent_envs), "infer")
        sent_t = dict(zip(sent_envs, t_rows, strict=True))
        state = self.ctx.state
        self.infer_t = {}
        for env in envs:
            t = sent_t[env] if env in sent_t else self.held_obs[env][0]
            self.infer_t[env] = t
            self.report.check(
                env not in self.holding,
                "plugrl-client.8.one-feedback-per-action",
                expected="a new infer only for envs whose chunk was fed back",
                actual=f"env {env} asked again while holding a chunk",
                evidence=self.transcript,
            )
            if env in state.lost:
                state.lost.discard(env)  # its feedback was dropped, as it must be: no baseline to compare
            elif env in state.last_t:
                wanted = 0 if state.ended[env] else state.last_t[env]
                self.report.check(
                    t == wanted,
                    "plugrl-client.8.1.infer-continues",
                    expected=f"env {env} t = {wanted}" + (" (a new episode)" if state.ended[env] else ""),
                    actual=f"t = {t:g}",
                    evidence=self.transcript,
                )
            elif not self.reconnected:
                self.report.check(
                    t == 0,
                    "plugrl-client.8.1.infer-continues",
                    expected=f"env {env} starts its first episode at t = 0",
                    actual=f"t = {t:g}",
                    evidence=self.transcript,
                )
            state.lost.discard(env)
        return envs

    def _infer_envs(self, message: dict[str, Any]) -> list[int]:
        try:
            for key in ("data", "env_indices", "step_ids"):
                if key not in message:
                    raise ProtocolError(f"the infer has no {key}")
            envs = index_array(message, "env_indices")
            if not envs:
                raise ProtocolError("the infer names no env")
            if len(set(envs)) != len(envs):
                raise ProtocolError(f"env_indices repeats an env: {envs[:8]}")
            step_ids = message["step_ids"]
            if not (isinstance(step_ids, np.ndarray) and step_ids.shape == (len(envs),)):
                raise ProtocolError(f"step_ids is not an array of {len(envs)} entries")
        except ProtocolError as exc:
            self.report.failed(
                "plugrl-client.5.2.infer-form",
                expected="a well-formed infer",
                actual=str(exc),
                evidence=self.transcript,
            )
            raise self.stopped(str(exc)) from None
        self.report.passed("plugrl-client.5.2.infer-form")
        return envs

    def _reuse_mask(self, message: dict[str, Any], envs: list[int]) -> list[bool]:
        if "reuse" not in message:
            return [False] * len(envs)
        if not self.reuse_offered:
            self.report.failed(
                "plugrl-client.10.1.reuse-only-offered",
                expected="no reuse key: the server does not list reuse-feedback-obs",
                actual="an infer with reuse",
                evidence=self.transcript,
            )
            raise self.stopped("reuse sent without the feature")
        self.report.passed("plugrl-client.10.1.reuse-only-offered")
        mask = message["reuse"]
        problem = ""
        if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (len(envs),)):
            problem = f"reuse is not a |b1 array of shape [{len(envs)}]"
        else:
            for env, reused in zip(envs, mask.tolist(), strict=True):
                if reused and env not in self.held_obs:
                    problem = f"env {env} reuses an observation never fed back on this connection"
                elif reused and self.held_obs[env][1]:
                    problem = f"env {env} reuses the terminal observation of an ended episode"
        if problem:
            self.report.failed(
                "plugrl-client.10.1.reuse-held-only",
                expected="reuse of held observations",
                actual=problem,
                evidence=self.transcript,
            )
            raise self.stopped(problem)
        self.report.passed("plugrl-client.10.1.reuse-held-only")
        reused = [bool(flag) for flag in mask.tolist()]
        self.reused_rows += sum(reused)
        return reused

    def _observation(self, obs: Any, rows: int, where: str) -> list[int]:
        """Judge an observation of `rows` rows; return each row's probe t."""
        try:
            found = observation_rows(obs)
            if found is not None and found != rows:
                raise ProtocolError(f"the {where} observation has {found} rows for {rows} envs")
            for name, image in obs["images"].items():
                if image.dtype != np.uint8 or image.ndim != 4:
                    raise ProtocolError(f"image {name!r} is {image.dtype.str} {list(image.shape)}, not uint8 [n,h,w,c]")
        except ProtocolError as exc:
            self.report.failed(
                "plugrl-client.5.2.observation-form",
                expected="a well-formed observation",
                actual=str(exc),
                evidence=self.transcript,
            )
            raise self.stopped(str(exc)) from None
        self.report.passed("plugrl-client.5.2.observation-form")
        text = obs["text"]
        if isinstance(text, np.ndarray) and text.dtype.kind == "U":
            self.report.passed("plugrl-client.3.4.text-form")
        else:
            self.report.info("plugrl-client.3.4.text-form", actual=f"text is a {type(text).__name__}")
        probe = probe_states(obs, rows, self.options.action_dim)
        if isinstance(probe, str):
            self.report.failed(
                "plugrl-client.8.1.probe-observation", expected="states t and a", actual=probe, evidence=self.transcript
            )
            raise self.stopped(f"not the probe environment: {probe}")
        self.report.passed("plugrl-client.8.1.probe-observation")
        self._last_a = probe[1]
        return [round(float(value)) for value in probe[0]]

    async def answer(self, envs: list[int]) -> None:
        chunk = probe_chunk(envs, self.options.horizon, self.options.action_dim, self.options.action_dtype)
        for row, env in enumerate(envs):
            self.holding[env] = Held(chunk[:, row, :], self.infer_t[env])
        message = {"message_type": "action", "data": {"env_ids": np.asarray(envs, dtype=np.int64), "action": chunk}}
        await self.send(pack(message), f"action {chunk.dtype.str} {list(chunk.shape)} for envs {envs[:8]}")

    # -- feedback

    async def feedback(self) -> None:
        message = await self.message()
        try:
            envs, terminated, truncated, _ = check_feedback(message)
        except ProtocolError as exc:
            self.report.failed(
                "plugrl-client.5.4.feedback-form",
                expected="a well-formed feedback",
                actual=str(exc),
                evidence=self.transcript,
            )
            raise self.stopped(str(exc)) from None
        self.report.passed("plugrl-client.5.4.feedback-form")
        rewards = message["data"]["rewards"]
        if rewards.dtype == np.float32:
            self.report.passed("plugrl-client.5.4.rewards-float32")
        else:
            self.report.info("plugrl-client.5.4.rewards-float32", actual=f"rewards are {rewards.dtype.str}")
        t_rows = self._observation(message["data"]["obs"], len(envs), "feedback")
        applied = self._last_a
        self.feedbacks += 1
        for row, env in enumerate(envs):
            held = self.holding.pop(env, None)
            if held is None:
                self._unheld(env)
                continue
            self.report.passed("plugrl-client.4.3.feedback-envs-held")
            ended = bool(terminated[row] or truncated[row])
            self._judge_row(
                env, held, t_rows[row], float(rewards[row]), applied[row], bool(terminated[row]), bool(truncated[row])
            )
            self.ctx.state.last_t[env] = t_rows[row]
            self.ctx.state.ended[env] = ended
            self.held_obs[env] = (t_rows[row], ended)

    def _unheld(self, env: int) -> None:
        if self.reconnected and env in self.ctx.state.lost:
            self.report.failed(
                "plugrl-client.7.6.no-stale-feedback",
                expected="no feedback for an action of an earlier connection",
                actual=f"feedback for env {env}, whose action came on the last connection",
                evidence=self.transcript,
            )
            return
        self.report.failed(
            "plugrl-client.4.3.feedback-envs-held",
            expected="feedback only for envs holding an action",
            actual=f"feedback for env {env}, which holds none",
            evidence=self.transcript,
        )

    def _judge_row(
        self, env: int, held: Held, t: int, reward: float, applied: np.ndarray, terminated: bool, truncated: bool
    ) -> None:
        report, horizon = self.report, self.options.horizon
        length = episode_length(env)
        if truncated:
            report.failed(
                "plugrl-client.5.4.stops-at-terminal",
                expected="truncated never set",
                actual=f"env {env} truncated",
                evidence=self.transcript,
            )
        if terminated and t > length:
            report.failed(
                "plugrl-client.5.4.stops-at-terminal",
                expected=f"env {env} stops at t = {length}",
                actual=f"t = {t}: it stepped past the terminal step",
                evidence=self.transcript,
            )
            return
        if terminated and t != length:
            hint = " (this is the next episode's observation)" if t < held.t0 + 1 else ""
            report.failed(
                "plugrl-client.5.4.terminal-observation",
                expected=f"env {env} terminal observation t = {length}",
                actual=f"t = {t}{hint}",
                evidence=self.transcript,
            )
            return
        if terminated:
            report.passed("plugrl-client.5.4.terminal-observation")
        report.check(
            t <= length and terminated == (t == length),
            "plugrl-client.5.4.stops-at-terminal",
            expected=f"env {env} stops at t = {length} with terminated set there only",
            actual=f"t = {t}, terminated = {terminated}",
            evidence=self.transcript,
        )
        steps = t - held.t0
        if not report.check(
            1 <= steps <= horizon,
            "plugrl-client.5.3.steps-within-horizon",
            expected=f"1..{horizon} steps",
            actual=f"env {env} ran {steps} steps (t {held.t0} -> {t})",
            evidence=self.transcript,
        ):
            return
        hint = " (the last step's reward, not the sum)" if reward == 1 and steps > 1 else ""
        report.check(
            reward == steps,
            "plugrl-client.5.4.chunk-sum-reward",
            expected=f"reward {steps} for {steps} steps",
            actual=f"env {env} reward {reward:g}{hint}",
            evidence=self.transcript,
        )
        wanted = held.chunk[steps - 1].astype(np.float64)
        width = applied.shape[0]
        report.check(
            width == wanted.shape[0] and bool(np.array_equal(applied, wanted)),
            "plugrl-client.5.3.time-major",
            expected=f"env {env} applied {describe_applied(wanted)}",
            actual=f"applied {describe_applied(applied)}",
            evidence=self.transcript,
        )

    # -- ends

    async def stop(self) -> None:
        """End the run for this client, as a server does: 1001 plugrl-server-stop."""
        await self.close(STOP_REASON)

    def lose_held(self) -> None:
        """The connection ended: every action still held is from an earlier connection now."""
        self.ctx.state.lost.update(self.holding)
