"""One recorded client connection to a PlugRL training server: the wire, with the judges' decisions recorded.

A `Probe` opens a connection, reads the metadata, sends infers and feedbacks
and reads what comes back; what each observation decides is the business of
the judges in `checks.plugrl.judging`, which the probe calls and whose
decisions it records. When a step cannot go on (no reply by the deadline, the
connection closed, an unreadable frame) the judge records the failure under the
clause the phase names as at stake, and the probe raises `PhaseStopped`, so the
phase stops at its first dead end instead of timing out again and again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, NoReturn, TypeVar

import numpy as np

from checks.decision import Decision, Judged, record
from checks.errors import NoReply, PeerClosed, PhaseStopped, Refused
from checks.evidence import Transcript, summarize, truncate
from checks.plugrl import judging
from checks.plugrl.codec import CodecError, pack, unpack
from checks.plugrl.messages import fault_summary, feedback_message
from checks.plugrl.messages import infer_message as infer_message
from checks.plugrl.options import Ctx
from checks.wire import WireSocket, open_websocket

ValueT = TypeVar("ValueT")

# Of the close deadline (`WireSocket.close`'s min(timeout, 2 s)): a close that took this much of it with
# no close frame back was waited out, not answered late.
CLOSE_WAIT = 0.9


class FrameDecoder:
    """Decodes each received frame once: for the transcript summary and for the judges.

    The last frame is kept only until the judges take its message, so a big
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

    def take(self, data: bytes) -> dict[str, Any] | CodecError:
        """The message of a frame, or why it has none; the frame is not kept after this."""
        decoded = self._decoded(data)
        self._last = None
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
    """One connection to the server under test; what it receives goes to the judges."""

    def __init__(self, ctx: Ctx, label: str) -> None:
        self.ctx = ctx
        self.report = ctx.report
        self.options = ctx.options
        self.transcript: Transcript = ctx.report.transcript(label)
        self.decoder = FrameDecoder(ctx.options.frame_cap)
        self.ws: WireSocket | None = None
        self.metadata: dict[str, Any] = {}
        self.form: judging.ActionForm | None = None  # the dtype and (H, *da) of the first action
        self.broken = False  # a step failed: the server is not trusted to close politely

    # ------------------------------------------------------------ decisions

    def record(self, decisions: list[Decision]) -> bool:
        """Record decisions with this connection's transcript; whether none missed."""
        return record(self.report, decisions, self.transcript)

    def judged(self, judged: Judged[ValueT]) -> ValueT:
        """Record a judge's decisions; stop the phase where the judge says the exchange cannot go on."""
        self.record(judged.decisions)
        if judged.stop is not None:
            raise PhaseStopped(judged.stop, self.transcript)
        return judged.value

    def stop(self, judged: Judged[Any]) -> NoReturn:
        self.record(judged.decisions)
        raise PhaseStopped(judged.stop or "the exchange cannot go on", self.transcript)

    # ------------------------------------------------------------ connection

    async def connect(self, compression: str | None = None) -> None:
        """The WebSocket handshake alone; raises Refused, and decides no clause."""
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

    async def open(self, at_stake: str = judging.SPEAKS_FIRST, alongside: bool = False) -> dict[str, Any]:
        """Connect and read the metadata; `at_stake` fails if it does not come.

        `alongside`: another connection of this phase is open and has had its metadata,
        so a handshake or metadata that does not come is charged to serving clients side by side.
        """
        if alongside:
            at_stake = judging.ALONGSIDE
        refused: Refused | None = None
        try:
            await self.connect()
        except Refused as exc:
            refused = exc
        self.judged(judging.handshake(refused, alongside))
        what = "a metadata message" + (" while another connection is open" if alongside else "")
        message = await self.receive(at_stake, what)
        data = self.judged(judging.metadata_message(message, at_stake))
        self.metadata = data or {}
        return self.metadata

    def offers(self, feature: str) -> bool:
        return judging.offers(self.metadata, feature)

    async def close(self) -> None:
        """Close properly; a connection that already failed is dropped without waiting on the server,
        and so is every connection once the server has let one close go unanswered to its deadline."""
        if self.ws is None:
            return
        unanswered = self.ctx.state.close_unanswered
        if (self.broken or unanswered is not None) and self.ws.closed is None:
            why = "after a failed step" if self.broken else f"as the server answered no close on {unanswered!r}"
            self.transcript.closed(None, f"dropped {why}", "checker")
            self.ws.connection.transport.abort()
            return
        started = asyncio.get_running_loop().time()
        await self.ws.close()
        waited = asyncio.get_running_loop().time() - started
        if self.ws.connection.protocol.close_rcvd is None and waited >= CLOSE_WAIT * min(self.ctx.timeout, 2.0):
            self.ctx.state.close_unanswered = self.transcript.label

    # ------------------------------------------------------------ frames

    @staticmethod
    async def _kept_cancellable(step: Awaitable[ValueT]) -> ValueT:
        """Await a step of the wire, never losing a cancellation of the phase on the way.

        Python 3.11's `asyncio.wait_for` (inside the wire's reads) returns its inner result, or
        raises its inner error, when that comes in the same loop turn as the phase's deadline
        cancels it; the phase would then run on to its natural end, past its deadline. Under
        load that turn is long (a 50 MB frame being read), so it happens: the cancellation is
        raised again here, where the task still says it is being cancelled.
        """
        try:
            return await step
        finally:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # in place of the late result or error, on purpose

    async def send(self, message: dict[str, Any] | bytes, at_stake: str, summary: str | None = None) -> None:
        """Send one frame; a closed connection or a stalled send fails `at_stake`."""
        assert self.ws is not None
        frame = message if isinstance(message, bytes) else pack(message)
        if summary is None:
            summary = summarize(message)
        problem: PeerClosed | NoReply
        try:
            await self._kept_cancellable(self.ws.send(frame, summary))
            return
        except PeerClosed as closed:
            problem = closed
        except NoReply as stalled:
            self.broken = True
            problem = stalled
        self.stop(judging.send_failed(at_stake, problem))

    async def receive(self, at_stake: str, what: str, timeout: float | None = None) -> dict[str, Any]:
        """The next message, decoded; anything else fails a clause and stops the phase."""
        frame = await self._frame(at_stake, what, timeout)
        judged = judging.frame(frame, None if isinstance(frame, str) else self.decoder.take(frame), what)
        # A traceback keeps its frames' locals alive until a GC cycle, and the frame may be 64 MiB.
        del frame
        if judged.stop is not None:
            self.broken = True
        message = self.judged(judged)
        assert message is not None
        return message

    async def _frame(self, at_stake: str, what: str, timeout: float | None) -> bytes | str:
        assert self.ws is not None
        problem: PeerClosed | NoReply
        refused: PeerClosed | None = None
        try:
            return await self._kept_cancellable(self.ws.recv(timeout))
        except NoReply as silence:
            problem = silence
            # The checker may have given up on the connection already (an oversized or
            # invalid frame) and still be waiting for the server to acknowledge that.
            sent = self.ws.connection.protocol.close_sent
            if sent is not None:
                refused = PeerClosed(by="checker", code=sent.code, reason=sent.reason)
        except PeerClosed as closed:
            problem = closed
        self.broken = True
        self.stop(judging.no_frame(at_stake, what, problem, self.options.frame_cap, refused))

    # ------------------------------------------------------------ the cycle

    async def infer(
        self,
        envs: list[int],
        at_stake: str = judging.ANSWERED,
        big: bool = False,
        reuse: list[bool] | None = None,
        timeout: float | None = None,
        nudged: int | None = None,
    ) -> np.ndarray | None:
        """Send an infer and judge the action; `at_stake` passes when it is answered.

        Returns the action array, or None when it is not an array.
        """
        await self.send(infer_message(self.options, envs, big, reuse, nudged), at_stake)
        message = await self.receive(at_stake, "an action message", timeout)
        reading = self.judged(judging.action_message(message, envs, at_stake, self.metadata, self.form))
        self.form = reading.form
        return reading.action

    async def feedback(
        self,
        envs: list[int],
        done: list[bool] | None = None,
        info: dict[str, Any] | None = None,
        at_stake: str = "plugrl.4.2.keeps-open",
    ) -> None:
        await self.send(feedback_message(self.options, envs, done, info), at_stake)

    async def cycle(self, envs: list[int], at_stake: str = judging.ANSWERED, **infer: Any) -> np.ndarray | None:
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
        try:
            frame = await self._kept_cancellable(self.ws.recv())
            if self._is_stray_metadata(frame):
                # A repeated metadata is its own fault; the resync may still follow it.
                self.record([judging.stray_metadata()])
                frame = await self._kept_cancellable(self.ws.recv())
        except (NoReply, PeerClosed) as outcome:
            return self.record([judging.resync(clause, what, outcome)])
        kind, shown = self.decoder.summarize(frame)
        decisions = [judging.text_frame(frame)] if isinstance(frame, str) else []
        self.record([*decisions, judging.answered_instead_of_resync(clause, what, kind, shown)])
        return False

    def _is_stray_metadata(self, frame: bytes | str) -> bool:
        if isinstance(frame, str):
            return False
        decoded = self.decoder.take(frame)
        return not isinstance(decoded, CodecError) and decoded.get("message_type") == "metadata"
