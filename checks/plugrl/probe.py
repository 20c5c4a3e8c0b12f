"""One recorded client connection to a PlugRL training server, and the checks every answer gets.

A `Probe` opens a connection, reads and checks the metadata, sends infers and
feedbacks, and checks each action it gets back. When a step cannot go on (no
reply by the deadline, the connection closed, an unreadable frame) it records
the failure under the clause at stake and raises `PhaseStopped`, so the phase stops
at its first dead end instead of timing out again and again.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import Any, cast

import numpy as np

from checks.core import NoReply, PhaseStopped, Transcript, summarize, truncate
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.messages import fault_summary, feedback_message, infer_message
from checks.plugrl.options import Ctx
from checks.plugrl.protocol import GOING_AWAY, RESYNC_REASON
from checks.wire import Closed, HandshakeFailed, WireSocket, open_websocket


def describe_close(closed: Closed) -> str:
    if closed.by == "network":
        return "the connection dropped without a close frame"
    who = "the server" if closed.by == "target" else "the checker"
    return f"{who} closed it with code {closed.code}, reason {truncate(closed.reason, 80)!r}"


class FrameDecoder:
    """Decodes each received frame once: for the transcript summary and for the checks.

    The last frame is kept only until the checks take its message, so a big
    frame is not held for the rest of the connection's life.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._last: tuple[bytes, dict[str, Any] | CodecError] | None = None

    def summarize(self, data: bytes | str) -> tuple[str, str]:
        if isinstance(data, str):
            return "text", repr(truncate(data, 200))
        decoded = self._decoded(data)
        if isinstance(decoded, CodecError):
            return "binary", f"undecodable: {decoded}"
        kind = decoded.get("message_type")
        return (kind if type(kind) is str and len(kind) <= 40 else "binary"), summarize(decoded)

    def decode(self, data: bytes) -> dict[str, Any]:
        decoded = self._decoded(data)
        self._last = None
        if isinstance(decoded, CodecError):
            del data  # a traceback keeps its frames' locals alive, and exceptions sit in cycles
            raise decoded
        return decoded

    def _decoded(self, data: bytes) -> dict[str, Any] | CodecError:
        if self._last is not None and self._last[0] is data:
            return self._last[1]
        try:
            decoded: dict[str, Any] | CodecError = unpack(data, self.max_size)
        except CodecError as exc:
            decoded = exc.with_traceback(None)  # its traceback would hold the frame in every caller's locals
        self._last = (data, decoded)
        return decoded


async def together(*steps: Awaitable[Any]) -> list[Any]:
    """Run steps concurrently and wait for all of them; then re-raise the first exception.

    A batching server may wait for every connected client, so concurrent
    clients must all be driven; none is left running when a sibling gives up.
    """
    results = await asyncio.gather(*steps, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


class Probe:
    """One connection to the server under test, with the checks it makes on what it receives."""

    def __init__(self, ctx: Ctx, label: str) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.options = ctx.options
        self.transcript: Transcript = ctx.report.transcript(label)
        self.decoder = FrameDecoder(ctx.options.frame_cap)
        self.ws: WireSocket | None = None
        self.metadata: dict[str, Any] = {}
        self.action_dtype: np.dtype | None = None
        self.action_layout: tuple[int, ...] | None = None  # (H, *da) of the first action
        self.broken = False  # a step failed: the server is not trusted to close politely

    # ------------------------------------------------------------ connection

    async def connect(self, compression: str | None = None) -> None:
        """The WebSocket handshake alone; raises HandshakeFailed, and decides no clause."""
        headers = self.options.request_headers()
        if self.options.api_key is not None:  # SPEC 1.2's scheme, not a bearer token
            headers["Authorization"] = f"Api-Key {self.options.api_key.get_secret_value()}"
        self.ws = await open_websocket(
            self.ctx.url,
            self.transcript,
            timeout=self.ctx.timeout,
            max_size=self.options.frame_cap,
            compression=compression,
            headers=headers or None,
            summarize=self.decoder.summarize,
            ssl_context=self.options.websocket_ssl(self.ctx.url),
        )

    async def open(self, at_stake: str = "plugrl.5.1.speaks-first", alongside: bool = False) -> dict[str, Any]:
        """Connect and read the metadata; `at_stake` fails if it does not come.

        `alongside`: another connection of this phase is open and has had its metadata,
        so a handshake or metadata that does not come is charged to serving clients side by side.
        """
        if alongside:
            at_stake = "plugrl.6.concurrent-clients"
        try:
            await self.connect()
        except HandshakeFailed as exc:
            self.report.failed(
                "plugrl.6.concurrent-clients" if alongside else "plugrl.1.websocket-handshake",
                expected="a WebSocket handshake" + (" while another connection is open" if alongside else ""),
                actual=f"it did not complete: {exc}",
                evidence=self.transcript,
            )
            raise PhaseStopped(f"the WebSocket handshake failed: {exc}", self.transcript) from None
        self.report.passed("plugrl.1.websocket-handshake", evidence=self.transcript)
        message = await self.receive(
            at_stake, "a metadata message" + (" while another connection is open" if alongside else "")
        )
        data = message.get("data")
        if message.get("message_type") != "metadata" or not isinstance(data, dict):
            self.report.failed(
                at_stake,
                expected='first message {"message_type": "metadata", "data": {...}}',
                actual=f"the first message was {summarize(message, 160)}",
                evidence=self.transcript,
            )
            raise PhaseStopped("the server sent no metadata", self.transcript)
        self.report.passed(at_stake, evidence=self.transcript)
        self.metadata = data
        self._check_metadata(data)
        return data

    def _check_metadata(self, data: dict[str, Any]) -> None:
        report, evidence = self.report, self.transcript
        if "protocol_version" in data:
            version = data["protocol_version"]
            report.check(
                type(version) is int and version == 1,
                "plugrl.10.protocol-version",
                expected="protocol_version 1",
                actual=f"protocol_version {truncate(repr(version), 60)}",
                evidence=evidence,
            )
        if "features" in data:
            features = data["features"]
            report.check(
                isinstance(features, list) and all(isinstance(f, str) for f in features),
                "plugrl.5.1.features-list",
                expected="a list of strings",
                actual=f"features {summarize(features, 120)}",
                evidence=evidence,
            )
        for key in ("action_horizon", "action_dim"):
            if key in data:
                value = data[key]
                report.check(
                    _positive_int(value),
                    "plugrl.5.1.declared-ints",
                    expected=f"{key} a positive integer",
                    actual=f"{key} {truncate(repr(value), 60)}",
                    evidence=evidence,
                )

    def offers(self, feature: str) -> bool:
        features = self.metadata.get("features")
        return isinstance(features, list) and feature in features

    async def close(self) -> None:
        """Close properly; a connection that already failed is dropped without waiting on the server."""
        if self.ws is None:
            return
        if self.broken and self.ws.closed is None:
            self.transcript.closed(None, "dropped after a failed step", "checker")
            self.ws.connection.transport.abort()
            return
        await self.ws.close()

    # ------------------------------------------------------------ frames

    async def send(self, message: dict[str, Any] | bytes, at_stake: str, summary: str | None = None) -> None:
        """Send one frame; a closed connection fails `at_stake`."""
        assert self.ws is not None
        frame = message if isinstance(message, bytes) else pack(message)
        if summary is None:
            summary = summarize(message)
        try:
            await self.ws.send(frame, summary)
        except Closed as closed:
            self.report.failed(
                at_stake,
                expected="the connection to stay open",
                actual=describe_close(closed),
                evidence=self.transcript,
            )
            raise PhaseStopped(f"{describe_close(closed)} while the checker was sending", self.transcript) from None
        except NoReply:
            self.broken = True
            self.report.failed(
                at_stake,
                expected="the server to read what it is sent",
                actual="sending stalled",
                evidence=self.transcript,
            )
            raise PhaseStopped("sending stalled", self.transcript) from None

    async def receive(self, at_stake: str, what: str, timeout: float | None = None) -> dict[str, Any]:
        """The next message, decoded; anything else fails a clause and aborts."""
        assert self.ws is not None
        report, evidence = self.report, self.transcript
        try:
            frame = await self.ws.recv(timeout)
        except NoReply as exc:
            self.broken = True
            # The checker may have given up on the connection already (an oversized or
            # invalid frame) and still be waiting for the server to acknowledge that.
            refused = self.ws.connection.protocol.close_sent
            if refused is not None:
                self._report_refused(at_stake, what, Closed(refused.code, refused.reason, "checker"))
            else:
                report.failed(
                    at_stake, expected=f"{what} within {exc.timeout:g}s", actual="nothing arrived", evidence=evidence
                )
            raise PhaseStopped(f"no {what} arrived within {exc.timeout:g}s", self.transcript) from None
        except Closed as closed:
            self.broken = True
            self._report_refused(at_stake, what, closed)
            raise PhaseStopped(f"{describe_close(closed)} instead of sending {what}", self.transcript) from None
        if isinstance(frame, str):
            self._fail_text_frame(frame)
            self.broken = True
            del frame  # as below: not kept alive by the traceback
            raise PhaseStopped("the server sent a text frame", self.transcript)
        report.passed("plugrl.2.binary-frames", evidence=evidence)
        try:
            message = self.decoder.decode(frame)
        except CodecError as exc:
            clause = "plugrl.3.2.ndarray-form" if exc.part == "array" else "plugrl.2.msgpack-map"
            report.failed(clause, expected=f"{what} the codec can read", actual=str(exc), evidence=evidence)
            self.broken = True
            # The traceback keeps this frame's locals until a GC cycle; the frame may be 64 MiB.
            del frame
            raise PhaseStopped("the server sent an undecodable frame", self.transcript) from None
        report.passed("plugrl.2.msgpack-map", evidence=evidence)
        report.passed("plugrl.3.2.ndarray-form", evidence=evidence)  # the codec has checked every array in it
        return message

    def _fail_text_frame(self, frame: str) -> None:
        self.report.failed(
            "plugrl.2.binary-frames",
            expected="a binary frame",
            actual=f"a text frame: {truncate(frame, 120)!r}",
            evidence=self.transcript,
        )

    def _report_refused(self, at_stake: str, what: str, closed: Closed) -> None:
        if closed.by == "checker" and closed.code == 1009:
            self.report.error(
                at_stake,
                f"the server sent a frame over the checker's frame_cap of {self.options.frame_cap} bytes",
                self.transcript,
            )
        else:
            self.report.failed(at_stake, expected=what, actual=describe_close(closed), evidence=self.transcript)

    # ------------------------------------------------------------ the cycle

    async def infer(
        self,
        envs: list[int],
        at_stake: str = "plugrl.5.3.answered-with-action",
        big: bool = False,
        reuse: list[bool] | None = None,
        timeout: float | None = None,
        nudged: int | None = None,
    ) -> np.ndarray | None:
        """Send an infer and check the action; `at_stake` passes when it is answered.

        Returns the action array, or None when it is not an array.
        """
        await self.send(infer_message(self.options, envs, big, reuse, nudged), at_stake)
        message = await self.receive(at_stake, "an action message", timeout)
        report, evidence = self.report, self.transcript
        kind = message.get("message_type")
        if kind == "metadata":
            report.failed(
                "plugrl.4.1.metadata-once", expected="an action", actual="a second metadata message", evidence=evidence
            )
            raise PhaseStopped("the server sent metadata again", self.transcript)
        report.passed("plugrl.4.1.metadata-once", evidence=evidence)
        data = message.get("data")
        if not report.check(
            kind == "action" and isinstance(data, dict),
            "plugrl.5.3.answered-with-action",
            expected='{"message_type": "action", "data": {...}}',
            actual=lambda: f"message_type {truncate(repr(kind), 40)}" if kind == "action" else summarize(message, 160),
            evidence=evidence,
        ) or not isinstance(data, dict):
            raise PhaseStopped("an infer was not answered with an action", self.transcript)
        report.passed(at_stake, evidence=evidence)
        self._check_env_ids(envs, data.get("env_ids"))
        return self._check_action(len(envs), data.get("action"))

    def _check_env_ids(self, envs: list[int], env_ids: Any) -> None:
        report, evidence = self.report, self.transcript
        is_array = isinstance(env_ids, np.ndarray)
        report.check(
            is_array and env_ids.dtype.str == "<i8" and env_ids.shape == (len(envs),),
            "plugrl.5.3.env-ids-form",
            expected=f"an ndarray <i8 [{len(envs)}]",
            actual=lambda: summarize(env_ids, 120) if env_ids is not None else "no env_ids",
            evidence=evidence,
        )
        # The order is judged on the values whatever their form, which env-ids-form judges.
        readable = (is_array and env_ids.dtype.kind in "iuf" and env_ids.size == len(envs)) or (
            isinstance(env_ids, list) and all(type(v) is int for v in env_ids)
        )
        shown = env_ids.ravel().tolist() if is_array and readable else env_ids
        report.check(
            readable and shown == envs,
            "plugrl.4.3.env-ids-order",
            expected=f"env_ids {envs}",
            actual=lambda: summarize(shown, 120) if env_ids is not None else "no env_ids",
            evidence=evidence,
        )

    def _check_action(self, n: int, action: Any) -> np.ndarray | None:
        report, evidence = self.report, self.transcript
        if not report.check(
            isinstance(action, np.ndarray) and action.ndim >= 2,
            "plugrl.5.3.action-array",
            expected="an ndarray [H, n, *da]",
            actual=lambda: summarize(action, 120),
            evidence=evidence,
        ):
            return None
        report.check(
            action.dtype.kind in "iuf",
            "plugrl.5.3.action-numeric",
            expected="an integer or float dtype",
            actual=f"dtype {action.dtype.str}",
            evidence=evidence,
        )
        shape = list(action.shape)
        report.check(
            action.shape[0] >= 1,
            "plugrl.5.3.horizon-positive",
            expected="H >= 1",
            actual=f"shape {shape}",
            evidence=evidence,
        )
        if not report.check(
            action.shape[1] == n,
            "plugrl.5.3.time-major",
            expected=f"shape [H, {n}, *da]",
            actual=f"shape {shape}",
            evidence=evidence,
        ):
            return cast(np.ndarray, action)  # a wrong layout makes the horizon and width checks meaningless
        self._check_declared(action)
        layout = (action.shape[0], *action.shape[2:])
        if self.action_dtype is None:
            self.action_dtype, self.action_layout = action.dtype, layout
        report.check(
            action.dtype == self.action_dtype,
            "plugrl.5.3.same-dtype",
            expected=f"dtype {self.action_dtype.str}, as in the first action",
            actual=f"dtype {action.dtype.str}",
            evidence=evidence,
        )
        report.check(
            layout == self.action_layout,
            "plugrl.5.3.same-shape",
            expected=f"H and da {list(self.action_layout or ())}, as in the first action",
            actual=f"H and da {list(layout)}",
            evidence=evidence,
        )
        if action.dtype.kind == "f":
            report.check(
                bool(np.isfinite(action).all()),
                "plugrl.5.3.finite-values",
                expected="finite values",
                actual=lambda: f"{int(np.count_nonzero(~np.isfinite(action)))} NaN or infinite values",
                evidence=evidence,
            )
        return cast(np.ndarray, action)

    def _check_declared(self, action: np.ndarray) -> None:
        report, evidence = self.report, self.transcript
        horizon = self.metadata.get("action_horizon")
        if _positive_int(horizon):
            report.check(
                action.shape[0] == horizon,
                "plugrl.5.1.declared-horizon",
                expected=f"H = {horizon}, as declared",
                actual=f"H = {action.shape[0]}",
                evidence=evidence,
            )
        width = self.metadata.get("action_dim")
        if _positive_int(width):
            actual = math.prod(action.shape[2:]) if action.ndim > 2 else 1
            report.check(
                actual == width,
                "plugrl.5.1.declared-dim",
                expected=f"{width} values per env and step, as declared",
                actual=f"{actual} (shape {list(action.shape)})",
                evidence=evidence,
            )

    async def feedback(
        self,
        envs: list[int],
        done: list[bool] | None = None,
        info: dict[str, Any] | None = None,
        at_stake: str = "plugrl.4.2.keeps-open",
    ) -> None:
        await self.send(feedback_message(self.options, envs, done, info), at_stake)

    async def cycle(
        self, envs: list[int], at_stake: str = "plugrl.5.3.answered-with-action", **infer: Any
    ) -> np.ndarray | None:
        """One infer, its action, and a feedback for the same envs."""
        action = await self.infer(envs, at_stake, **infer)
        await self.feedback(envs, at_stake=at_stake)
        return action

    async def fault(self, frame: bytes, clause: str, what: str) -> bool:
        """Send a frame the server must refuse, then expect the resync close `clause` demands."""
        await self.send(frame, clause, summary=fault_summary(what, frame))
        return await self.expect_resync(clause, what)

    async def expect_resync(self, clause: str, what: str) -> bool:
        """After a fault, the server must close this connection with 1001 plugrl-server-resync."""
        assert self.ws is not None
        report, evidence = self.report, self.transcript
        expected = f"after {what}: close 1001 {RESYNC_REASON!r}"
        try:
            frame = await self.ws.recv()
            if self._is_stray_metadata(frame):
                # A repeated metadata is its own fault; the resync may still follow it.
                report.failed(
                    "plugrl.4.1.metadata-once",
                    expected="one metadata message per connection",
                    actual="a second metadata message",
                    evidence=evidence,
                )
                frame = await self.ws.recv()
        except NoReply as exc:
            report.failed(
                clause, expected=expected, actual=f"the connection stayed open for {exc.timeout:g}s", evidence=evidence
            )
            return False
        except Closed as closed:
            return report.check(
                closed.by == "target" and closed.code == GOING_AWAY and closed.reason == RESYNC_REASON,
                clause,
                expected=expected,
                actual=describe_close(closed),
                evidence=evidence,
            )
        kind, shown = self.decoder.summarize(frame)
        if isinstance(frame, str):
            self._fail_text_frame(frame)
        report.failed(
            clause,
            expected=expected,
            actual=f"the server answered with a {kind} frame: {truncate(shown, 160)}",
            evidence=evidence,
        )
        return False

    def _is_stray_metadata(self, frame: bytes | str) -> bool:
        if isinstance(frame, str):
            return False
        try:
            return self.decoder.decode(frame).get("message_type") == "metadata"
        except CodecError:
            return False


def _positive_int(value: Any) -> bool:
    return type(value) is int and value > 0
