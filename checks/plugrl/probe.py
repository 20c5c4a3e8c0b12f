"""One recorded client connection to a PlugRL training server, and the checks every answer gets.

A `Probe` opens a connection, reads and checks the metadata, sends infers and
feedbacks, and checks each action it gets back. When a step cannot go on (no
reply by the deadline, the connection closed, an unreadable frame) it records
the failure under the clause at stake and raises `Abort`, so the phase stops
at its first dead end instead of timing out again and again.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import Any

import numpy as np

from checks.core import Transcript, summarize, truncate
from checks.plugrl import clauses as C
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.messages import feedback_message, infer_message
from checks.wire import Closed, HandshakeFailed, NoReply, WireSocket, open_websocket


class Abort(Exception):
    """The phase cannot go on; the reason is already recorded under its clause."""


def describe_close(closed: Closed) -> str:
    if closed.by == "network":
        return "the connection dropped without a close frame"
    who = "the server" if closed.by == "target" else "the checker"
    return f"{who} closed it with code {closed.code}, reason {truncate(closed.reason, 80)!r}"


class FrameDecoder:
    """Decodes each received frame once: for the transcript summary and for the checks."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._last: tuple[bytes, dict[str, Any] | CodecError] | None = None

    def summarize(self, data: bytes | str) -> tuple[str, str]:
        if isinstance(data, str):
            return "text", repr(truncate(data, 200))
        decoded = self._decode(data)
        if isinstance(decoded, CodecError):
            return "binary", f"undecodable: {decoded}"
        kind = decoded.get("message_type")
        return (kind if isinstance(kind, str) else "binary"), summarize(decoded)

    def decode(self, data: bytes) -> dict[str, Any]:
        decoded = self._last[1] if self._last is not None and self._last[0] is data else self._decode(data)
        if isinstance(decoded, CodecError):
            raise decoded
        return decoded

    def _decode(self, data: bytes) -> dict[str, Any] | CodecError:
        try:
            decoded: dict[str, Any] | CodecError = unpack(data, self.max_size)
        except CodecError as exc:
            decoded = exc
        self._last = (data, decoded)
        return decoded


async def together(*steps: Awaitable[Any]) -> list[Any]:
    """Run steps concurrently and wait for all of them; then re-raise the first Abort.

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

    def __init__(self, ctx: Any, label: str) -> None:
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
        headers = None
        if self.options.api_key is not None:
            headers = {"Authorization": f"Api-Key {self.options.api_key.get_secret_value()}"}
        self.ws = await open_websocket(
            self.ctx.url,
            self.transcript,
            timeout=self.ctx.timeout,
            max_size=self.options.frame_cap,
            compression=compression,
            headers=headers,
            summarize=self.decoder.summarize,
        )

    async def open(self, at_stake: str = C.SPEAKS_FIRST, alongside: bool = False) -> dict[str, Any]:
        """Connect and read the metadata; `at_stake` fails if it does not come.

        `alongside`: another connection of this phase is open and has had its metadata,
        so a handshake or metadata that does not come is charged to serving clients side by side.
        """
        if alongside:
            at_stake = C.CONCURRENT_CLIENTS
        try:
            await self.connect()
        except HandshakeFailed as exc:
            self.report.failed(
                C.CONCURRENT_CLIENTS if alongside else C.HANDSHAKE,
                "a WebSocket handshake" + (" while another connection is open" if alongside else ""),
                f"it did not complete: {exc}",
                self.transcript,
            )
            raise Abort(str(exc)) from None
        self.report.passed(C.HANDSHAKE, evidence=self.transcript)
        message = await self.receive(
            at_stake, "a metadata message" + (" while another connection is open" if alongside else "")
        )
        data = message.get("data")
        if message.get("message_type") != "metadata" or not isinstance(data, dict):
            self.report.failed(
                at_stake,
                'first message {"message_type": "metadata", "data": {...}}',
                f"the first message was {summarize(message, 160)}",
                self.transcript,
            )
            raise Abort("no metadata")
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
                C.PROTOCOL_VERSION,
                "protocol_version 1",
                f"protocol_version {truncate(repr(version), 60)}",
                evidence,
            )
        if "features" in data:
            features = data["features"]
            report.check(
                isinstance(features, list) and all(isinstance(f, str) for f in features),
                C.FEATURES_LIST,
                "a list of strings",
                f"features {summarize(features, 120)}",
                evidence,
            )
        for key in ("action_horizon", "action_dim"):
            if key in data:
                value = data[key]
                report.check(
                    _positive_int(value),
                    C.DECLARED_INTS,
                    f"{key} a positive integer",
                    f"{key} {truncate(repr(value), 60)}",
                    evidence,
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
            self.report.failed(at_stake, "the connection to stay open", describe_close(closed), self.transcript)
            raise Abort("closed") from None
        except NoReply:
            self.report.failed(at_stake, "the server to read what it is sent", "sending stalled", self.transcript)
            raise Abort("send stalled") from None

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
                report.failed(at_stake, f"{what} within {exc.timeout:g}s", "nothing arrived", evidence)
            raise Abort("no reply") from None
        except Closed as closed:
            self.broken = True
            self._report_refused(at_stake, what, closed)
            raise Abort("closed") from None
        if isinstance(frame, str):
            report.failed(C.BINARY_FRAMES, "a binary frame", f"a text frame: {truncate(frame, 120)!r}", evidence)
            self.broken = True
            raise Abort("text frame")
        report.passed(C.BINARY_FRAMES, evidence=evidence)
        try:
            message = self.decoder.decode(frame)
        except CodecError as exc:
            clause = C.NDARRAY_FORM if exc.part == "array" else C.MSGPACK_MAP
            report.failed(clause, f"{what} the codec can read", str(exc), evidence)
            self.broken = True
            raise Abort("undecodable") from None
        report.passed(C.MSGPACK_MAP, evidence=evidence)
        report.passed(C.NDARRAY_FORM, evidence=evidence)  # the codec has checked every array in it
        return message

    def _report_refused(self, at_stake: str, what: str, closed: Closed) -> None:
        if closed.by == "checker" and closed.code == 1009:
            self.report.error(
                at_stake,
                f"the server sent a frame over the checker's frame_cap of {self.options.frame_cap} bytes",
                self.transcript,
            )
        else:
            self.report.failed(at_stake, what, describe_close(closed), self.transcript)

    # ------------------------------------------------------------ the cycle

    async def infer(
        self,
        envs: list[int],
        at_stake: str = C.ANSWERED_WITH_ACTION,
        big: bool = False,
        reuse: list[bool] | None = None,
        timeout: float | None = None,
    ) -> np.ndarray | None:
        """Send an infer and check the action; `at_stake` passes when it is answered.

        Returns the action array, or None when it is not an array.
        """
        await self.send(infer_message(self.options, envs, big, reuse), at_stake)
        message = await self.receive(at_stake, "an action message", timeout)
        report, evidence = self.report, self.transcript
        kind = message.get("message_type")
        if kind == "metadata":
            report.failed(C.METADATA_ONCE, "an action", "a second metadata message", evidence)
            raise Abort("metadata again")
        report.passed(C.METADATA_ONCE, evidence=evidence)
        data = message.get("data")
        if not report.check(
            kind == "action" and isinstance(data, dict),
            C.ANSWERED_WITH_ACTION,
            '{"message_type": "action", "data": {...}}',
            lambda: f"message_type {truncate(repr(kind), 40)}" if kind == "action" else summarize(message, 160),
            evidence,
        ):
            raise Abort("not an action")
        report.passed(at_stake, evidence=evidence)
        self._check_env_ids(envs, data.get("env_ids"))
        return self._check_action(len(envs), data.get("action"))

    def _check_env_ids(self, envs: list[int], env_ids: Any) -> None:
        report, evidence = self.report, self.transcript
        is_array = isinstance(env_ids, np.ndarray)
        report.check(
            is_array and env_ids.dtype.str == "<i8" and env_ids.shape == (len(envs),),
            C.ENV_IDS_FORM,
            f"an ndarray <i8 [{len(envs)}]",
            lambda: summarize(env_ids, 120) if env_ids is not None else "no env_ids",
            evidence,
        )
        # The order is judged on the values whatever their form, which env-ids-form judges.
        readable = (is_array and env_ids.dtype.kind in "iuf" and env_ids.size == len(envs)) or (
            isinstance(env_ids, list) and all(type(v) is int for v in env_ids)
        )
        shown = env_ids.ravel().tolist() if is_array and readable else env_ids
        report.check(
            readable and shown == envs,
            C.ENV_IDS_ORDER,
            f"env_ids {envs}",
            lambda: summarize(shown, 120) if env_ids is not None else "no env_ids",
            evidence,
        )

    def _check_action(self, n: int, action: Any) -> np.ndarray | None:
        report, evidence = self.report, self.transcript
        if not report.check(
            isinstance(action, np.ndarray) and action.ndim >= 2,
            C.ACTION_ARRAY,
            "an ndarray [H, n, *da]",
            lambda: summarize(action, 120),
            evidence,
        ):
            return None
        report.check(
            action.dtype.kind in "iuf",
            C.ACTION_NUMERIC,
            "an integer or float dtype",
            f"dtype {action.dtype.str}",
            evidence,
        )
        shape = list(action.shape)
        report.check(action.shape[0] >= 1, C.HORIZON_POSITIVE, "H >= 1", f"shape {shape}", evidence)
        if not report.check(action.shape[1] == n, C.TIME_MAJOR, f"shape [H, {n}, *da]", f"shape {shape}", evidence):
            return action  # a wrong layout makes the horizon and width checks meaningless
        self._check_declared(action)
        layout = (action.shape[0], *action.shape[2:])
        if self.action_dtype is None:
            self.action_dtype, self.action_layout = action.dtype, layout
        report.check(
            action.dtype == self.action_dtype,
            C.SAME_DTYPE,
            f"dtype {self.action_dtype.str}, as in the first action",
            f"dtype {action.dtype.str}",
            evidence,
        )
        report.check(
            layout == self.action_layout,
            C.SAME_SHAPE,
            f"H and da {list(self.action_layout or ())}, as in the first action",
            f"H and da {list(layout)}",
            evidence,
        )
        if action.dtype.kind == "f":
            report.check(
                bool(np.isfinite(action).all()),
                C.FINITE_VALUES,
                "finite values",
                lambda: f"{int(np.count_nonzero(~np.isfinite(action)))} NaN or infinite values",
                evidence,
            )
        return action

    def _check_declared(self, action: np.ndarray) -> None:
        report, evidence = self.report, self.transcript
        horizon = self.metadata.get("action_horizon")
        if _positive_int(horizon):
            report.check(
                action.shape[0] == horizon,
                C.DECLARED_HORIZON,
                f"H = {horizon}, as declared",
                f"H = {action.shape[0]}",
                evidence,
            )
        width = self.metadata.get("action_dim")
        if _positive_int(width):
            actual = math.prod(action.shape[2:]) if action.ndim > 2 else 1
            report.check(
                actual == width,
                C.DECLARED_DIM,
                f"{width} values per env and step, as declared",
                f"{actual} (shape {list(action.shape)})",
                evidence,
            )

    async def feedback(
        self,
        envs: list[int],
        done: list[bool] | None = None,
        info: dict[str, Any] | None = None,
        at_stake: str = C.KEEPS_OPEN,
    ) -> None:
        await self.send(feedback_message(self.options, envs, done, info), at_stake)

    async def cycle(self, envs: list[int], at_stake: str = C.ANSWERED_WITH_ACTION, **infer: Any) -> np.ndarray | None:
        """One infer, its action, and a feedback for the same envs."""
        action = await self.infer(envs, at_stake, **infer)
        await self.feedback(envs, at_stake=at_stake)
        return action

    async def fault(self, frame: bytes, clause: str, what: str) -> bool:
        """Send a frame the server must refuse, then expect the resync close `clause` demands."""
        await self.send(frame, clause, summary=f"fault: {what} ({len(frame)} bytes)")
        return await self.expect_resync(clause, what)

    async def expect_resync(self, clause: str, what: str) -> bool:
        """After a fault, the server must close this connection with 1001 plugrl-server-resync."""
        assert self.ws is not None
        report, evidence = self.report, self.transcript
        expected = f"after {what}: close 1001 {C.RESYNC_REASON!r}"
        try:
            frame = await self.ws.recv()
            if self._is_stray_metadata(frame):
                # A repeated metadata is its own fault; the resync may still follow it.
                report.failed(
                    C.METADATA_ONCE, "one metadata message per connection", "a second metadata message", evidence
                )
                frame = await self.ws.recv()
        except NoReply as exc:
            report.failed(clause, expected, f"the connection stayed open for {exc.timeout:g}s", evidence)
            return False
        except Closed as closed:
            return report.check(
                closed.by == "target" and closed.code == C.GOING_AWAY and closed.reason == C.RESYNC_REASON,
                clause,
                expected,
                describe_close(closed),
                evidence,
            )
        kind, shown = self.decoder.summarize(frame)
        if isinstance(frame, str):
            report.failed(C.BINARY_FRAMES, "a binary frame", f"a text frame: {truncate(frame, 120)!r}", evidence)
        report.failed(clause, expected, f"the server answered with a {kind} frame: {truncate(shown, 160)}", evidence)
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
