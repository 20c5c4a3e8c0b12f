"""Zoo faults in how a PlugRL server behaves: protocol errors, what it accepts, reuse, the feedback
timeout and the stop.

Each class is the conforming `ZooServer` with one hook overridden; `ZOO` in
`catalogue.py` says which clause the suite must flag for each.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

from tests.zoo.plugrl_server.core import GOING_AWAY, RESYNC, STOP, ClientGone, ZooServer
from tests.zoo.plugrl_server.messages import ProtocolError, pack, unpack

# ---------------------------------------------------------------- 7.2 / 7.4: errors


class TracebackThen1011(ZooServer):
    """openpi style: a protocol error gets a traceback text frame, then 1011."""

    async def on_protocol_error(self, connection, error):
        await connection.ws.send(f"Traceback (most recent call last):\n  ProtocolError: {error}")
        await connection.ws.close(1011, "Internal server error.")


class MalformedInfer1011(ZooServer):
    """A malformed infer raises inside the handler: 1011 instead of 1001 resync."""

    code = 1011
    reason = "Internal server error."

    async def on_protocol_error(self, connection, error):
        if error.kind == "infer":
            await connection.ws.close(self.code, self.reason)
        else:
            await super().on_protocol_error(connection, error)


class MalformedInfer1000(MalformedInfer1011):
    """A malformed infer gets a normal close, 1000, instead of 1001 resync."""

    code, reason = 1000, ""


class MalformedInferWrongReason(MalformedInfer1011):
    """A malformed infer closes with 1001 but an abbreviated reason."""

    code, reason = GOING_AWAY, "resync"


class Lenient(ZooServer):
    """Answers a malformed infer, defaulting what is missing."""

    def read_infer(self, connection, message):
        try:
            return super().read_infer(connection, message)
        except ProtocolError as error:
            if error.kind != "infer":
                raise
            return np.zeros(1, dtype="<i8")


class IgnoresStrayMessages(ZooServer):
    """Drops a message that is not an infer where an infer is due, and keeps reading."""

    async def exchange(self, connection):
        try:
            await super().exchange(connection)
        except ProtocolError as error:
            if error.kind != "type":
                raise


class SkipsUndecodableFrames(ZooServer):
    """Logs and skips a binary frame that is not msgpack instead of resyncing."""

    async def exchange(self, connection):
        try:
            await super().exchange(connection)
        except ProtocolError as error:
            if error.kind != "msgpack":
                raise


class ResyncWithTrailingSpace(ZooServer):
    """Closes protocol errors with 1001 and 'plugrl-server-resync ', one space too many."""

    async def on_protocol_error(self, connection, error):
        await connection.ws.close(GOING_AWAY, RESYNC + " ")


class CrashesOnBadNdarray(ZooServer):
    """Lets the codec's error on a malformed ndarray escape: 1011 instead of a resync."""

    async def on_protocol_error(self, connection, error):
        if error.kind == "array":
            await connection.ws.close(1011, "Internal server error.")
        else:
            await super().on_protocol_error(connection, error)


class HangsOnMalformedInfer(ZooServer):
    """Neither answers nor closes after a malformed infer; it just stops reading."""

    async def on_protocol_error(self, connection, error):
        if error.kind != "infer":
            await super().on_protocol_error(connection, error)
            return
        await connection.ws.wait_closed()


class DiesOnInfo(ZooServer):
    """Before plugrl-server #108: an unsplittable info raises, 1011, and the server stops."""

    async def on_protocol_error(self, connection, error):
        if error.kind != "info":
            await super().on_protocol_error(connection, error)
            return
        await connection.ws.close(1011, "Internal server error.")
        await self.shut_down(1011, "Internal server error.")


class StoresUnsplittableInfo(ZooServer):
    """Accepts an info it cannot split per env and carries on."""

    def check_info(self, info, m):
        if not isinstance(info, dict):
            raise ProtocolError("feedback", "info is not a map")


class DropsBystanders(ZooServer):
    """Stays up after a protocol error but drops every other live connection too."""

    async def on_protocol_error(self, connection, error):
        await super().on_protocol_error(connection, error)
        others = [c.ws for c in self.connections.values() if c is not connection]
        await asyncio.gather(*(ws.close(GOING_AWAY, RESYNC) for ws in others), return_exceptions=True)


class AcceptsTwoInfers(ZooServer):
    """Has a dispatcher: an infer where a feedback is due is simply answered."""

    async def next_feedback(self, connection):
        while True:
            frame = await super().next_feedback(connection)
            try:
                message = unpack(frame)
            except ProtocolError:
                return frame
            if message.get("message_type") != "infer":
                return frame
            env_ids = self.read_infer(connection, message)
            action = self.action(connection, env_ids)
            await connection.ws.send(self.encode(self.action_message(connection, env_ids, action)))
            connection.holding.update(env_ids.tolist())


# ---------------------------------------------------------------- 4.3 / 5.2 / 1.1: what it accepts


class PositionalFeedback(ZooServer):
    """Pairs feedback with the infer by position, so it rejects a different env set."""

    def check_feedback_envs(self, connection, env_ids):
        if set(env_ids.tolist()) != set(connection.last_infer):
            raise ProtocolError("feedback", "feedback names other envs than the last infer")


class FixedBatch(ZooServer):
    """Fixes n at the first infer's size and rejects a ragged batch."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.sizes: dict[object, int] = {}

    def check_batch_size(self, connection, n):
        first = self.sizes.setdefault(connection.ws, n)
        if n != first:
            raise ProtocolError("infer", f"n changed from {first} to {n}")


class FlatInfoOnly(ZooServer):
    """Splits info by top-level arrays only, so nested per-env episode arrays count as one entry."""

    def check_info(self, info, m):
        if not isinstance(info, dict):
            raise ProtocolError("feedback", "info is not a map")
        arrays = [v for v in info.values() if isinstance(v, np.ndarray) and v.ndim >= 1]
        rows = arrays[0].shape[0] if arrays else 1
        if info and rows != m:
            raise ProtocolError("info", f"info does not split into {m} entries")


class GlobalEnvState(ZooServer):
    """Keys env state by index across connections, so an index another client holds is refused."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.owners: dict[int, object] = {}

    def read_infer(self, connection, message):
        env_ids = super().read_infer(connection, message)
        taken = [env for env in env_ids.tolist() if self.owners.get(env, connection.ws) is not connection.ws]
        if taken:
            raise ProtocolError("infer", f"envs {taken} belong to another connection")
        self.owners.update(dict.fromkeys(env_ids.tolist(), connection.ws))
        return env_ids

    def forget(self, connection):
        self.owners = {env: ws for env, ws in self.owners.items() if ws is not connection.ws}
        super().forget(connection)


class TiresAfterThirteenInfers(ZooServer):
    """Stops answering after thirteen infers on a connection, and neither answers nor closes it."""

    async def exchange(self, connection):
        if connection.infers >= 13:
            await connection.ws.wait_closed()
            raise ClientGone()
        await super().exchange(connection)


class OneConnectionAtATime(ZooServer):
    """Serves one connection at a time: a second one waits, unanswered, until the first closes."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.turn = asyncio.Lock()

    async def handle(self, ws):
        async with self.turn:
            await super().handle(ws)


class RecyclesConnections(ZooServer):
    """Closes every connection normally after eight exchanges, like an HTTP keep-alive limit."""

    async def exchange(self, connection):
        await super().exchange(connection)
        if connection.infers >= 8:
            await connection.ws.close(1000, "request limit reached")


class OneMebibyteCap(ZooServer):
    """Leaves the frame size cap at the usual 1 MiB library default."""

    def serve_options(self):
        return {**super().serve_options(), "max_size": 2**20}


class NegotiatesDeflate(ZooServer):
    """Accepts permessage-deflate when a client offers it."""

    def serve_options(self):
        return {**super().serve_options(), "compression": "deflate"}


class ImpatientFeedback(ZooServer):
    """Closes a connection whose feedback takes over a second, far below SPEC's 60 s."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "feedback_timeout": 1.0})


class CountsGoneClients(ZooServer):
    """Batches across connections but never forgets a client that left, so it waits for it forever."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**{**options, "batching": True})

    def forget(self, connection):
        self.pending = [r for r in self.pending if r.connection is not connection]


# ---------------------------------------------------------------- 7.1: the stop


class PlainStop(ZooServer):
    """Ends the run with a plain close: 1000 and no reason."""

    async def end_run(self):
        await self.shut_down(1000, "")


class WrongStopReason(ZooServer):
    """Ends the run with 1001 but a reason of its own."""

    async def end_run(self):
        await self.shut_down(GOING_AWAY, "training finished")


class StopsWith1000(ZooServer):
    """Ends the run with the right reason but a normal close, 1000, instead of 1001."""

    async def end_run(self):
        await self.shut_down(1000, STOP)


class NeverStops(ZooServer):
    """Is told to stop after a number of feedbacks but never does."""

    async def end_run(self):
        pass


# ---------------------------------------------------------------- 7.3: the feedback timeout


class FeedbackTimeout1011(ZooServer):
    """The missing feedback raises inside the handler: 1011 instead of 1001 Feedback timeout."""

    async def on_feedback_timeout(self, connection):
        await connection.ws.close(1011, "Internal server error.")


class FeedbackTimeout1000(ZooServer):
    """Gives up on a missing feedback with a normal close, 1000 and no reason."""

    async def on_feedback_timeout(self, connection):
        await connection.ws.close(1000, "")


class FeedbackTimeoutWrongReason(ZooServer):
    """Closes with 1001 for a missing feedback, but with a lower-case reason of its own spelling."""

    async def on_feedback_timeout(self, connection):
        await connection.ws.close(GOING_AWAY, "feedback timeout")


class NoFeedbackTimeout(ZooServer):
    """Waits for a feedback forever: a client that died mid-chunk holds its connection open."""

    async def next_feedback(self, connection):
        return await connection.ws.recv()


class HalvesFeedbackTimeout(ZooServer):
    """Closes, properly, after half the feedback timeout it was configured with (a unit slip)."""

    async def next_feedback(self, connection):
        return await asyncio.wait_for(connection.ws.recv(), self.feedback_timeout / 2)


class HeartbeatWhileWaiting(ZooServer):
    """Sends a msgpack heartbeat message every 0.2 s while it waits for a feedback."""

    async def next_feedback(self, connection):
        receiving = asyncio.ensure_future(super().next_feedback(connection))
        try:
            while not receiving.done():
                await asyncio.wait({receiving}, timeout=0.2)
                if not receiving.done():
                    await connection.ws.send(pack({"message_type": "heartbeat", "data": {}}))
            return receiving.result()
        finally:
            receiving.cancel()
