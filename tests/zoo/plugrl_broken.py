"""The zoo: PlugRL training servers that are conforming except for ONE fault each.

Every server is a `ZooServer` (see `plugrl_core.py`) with one hook
overridden. `ZOO` maps a name to the entry the tests run: the server's
factory, the clause id the `plugrl-server` suite must flag, and how to run
the suite against it (phases, options, which other clauses may fail as a
knock-on of the same fault).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.zoo.plugrl_core import GOING_AWAY, RESYNC, ZooServer
from tests.zoo.plugrl_messages import ProtocolError, pack, unpack

# ---------------------------------------------------------------- 5.3 / 4.3: the action


class EnvMajor(ZooServer):
    """Forgets the transpose: sends [n, H, da]."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids).swapaxes(0, 1)


class ReshapeNotTranspose(ZooServer):
    """Computes [n, H, da] and relabels the buffer as [H, n, da] instead of transposing it."""

    def action(self, connection, env_ids):
        env_major = np.ascontiguousarray(super().action(connection, env_ids).swapaxes(0, 1))
        return env_major.reshape(self.horizon, len(env_ids), self.action_dim)


class PermutedRows(ZooServer):
    """Echoes `env_ids` correctly but sends the rows in reverse order."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids)[:, ::-1]


class NoEnvIds(ZooServer):
    """The older single-env dialect: the action has no `env_ids`."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        del message["data"]["env_ids"]
        return message


class SortedEnvIds(ZooServer):
    """Answers rows and `env_ids` in ascending env order, not the request's order."""

    def action_message(self, connection, env_ids, action):
        order = np.argsort(env_ids, kind="stable")
        return super().action_message(connection, env_ids[order], action[:, order])


class EnvIdsAsList(ZooServer):
    """Sends `env_ids` as a plain msgpack list instead of an ndarray."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = env_ids.tolist()
        return message


class EnvIdsInt32(ZooServer):
    """Sends `env_ids` as `<i4` instead of `<i8`."""

    def action_message(self, connection, env_ids, action):
        message = super().action_message(connection, env_ids, action)
        message["data"]["env_ids"] = env_ids.astype("<i4")
        return message


class WrongHorizon(ZooServer):
    """Declares H in the metadata but sends H + 1 steps."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[-1:]], axis=0)


class WrongActionDim(ZooServer):
    """Declares action_dim but sends one more column."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[..., -1:]], axis=2)


class VaryingHorizon(ZooServer):
    """Declares no horizon and sends H, then H + 1, then H, ... on one connection."""

    def default_metadata(self):
        metadata = super().default_metadata()
        del metadata["action_horizon"]
        return metadata

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return np.concatenate([chunk, chunk[-1:]], axis=0) if connection.infers % 2 == 0 else chunk


class ActionAsList(ZooServer):
    """Sends the chunk as nested msgpack lists instead of an ndarray."""

    def action_message(self, connection, env_ids, action):
        return super().action_message(connection, env_ids, action.tolist())


class EmptyChunk(ZooServer):
    """Declares no horizon and sends chunks of zero steps, [0, n, da]."""

    def default_metadata(self):
        metadata = super().default_metadata()
        del metadata["action_horizon"]
        return metadata

    def action(self, connection, env_ids):
        return super().action(connection, env_ids)[:0]


class DriftingDtype(ZooServer):
    """Answers with float32 and float64 chunks in turn on one connection."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids)
        return chunk.astype("<f8") if connection.infers % 2 == 0 else chunk


class NaNActions(ZooServer):
    """Lets a NaN through in the last step of every chunk."""

    def action(self, connection, env_ids):
        chunk = super().action(connection, env_ids).copy()
        chunk[-1, :, 0] = np.nan
        return chunk


class BoolAction(ZooServer):
    """Sends the chunk with a bool dtype."""

    def action(self, connection, env_ids):
        return super().action(connection, env_ids) > 0.05


class ShortNdarray(ZooServer):
    """Emits an action ndarray whose data is shorter than prod(shape) * itemsize."""

    def encode(self, message):
        if message.get("message_type") != "action":
            return pack(message)
        action = message["data"]["action"]
        message["data"]["action"] = {
            b"__ndarray__": True,
            b"data": action.tobytes()[: -action.dtype.itemsize],
            b"dtype": action.dtype.str,
            b"shape": list(action.shape),
        }
        return pack(message)


class InvalidMsgpack(ZooServer):
    """Answers an infer with bytes that are not msgpack (0xc1 is never used)."""

    def encode(self, message):
        return b"\xc1\xc1\xc1" if message.get("message_type") == "action" else pack(message)


# ---------------------------------------------------------------- 5.1 / 10: the metadata


class NoMetadata(ZooServer):
    """Never speaks first; waits for the client."""

    async def greet(self, connection):
        pass


class BareMetadata(ZooServer):
    """openpi style: the first frame is the bare metadata map, with no envelope."""

    async def greet(self, connection):
        await connection.ws.send(pack(self.metadata))


class MetadataTwice(ZooServer):
    """Sends the metadata envelope twice."""

    async def greet(self, connection):
        await super().greet(connection)
        await super().greet(connection)


class HorizonAsString(ZooServer):
    """Declares action_horizon as the string "4"."""

    def default_metadata(self):
        return {**super().default_metadata(), "action_horizon": str(self.horizon)}


class RequiresApiKey(ZooServer):
    """Refuses the handshake (401) unless an Authorization header is sent, which SPEC 1.2 makes optional."""

    def serve_options(self):
        return {**super().serve_options(), "process_request": self.demand_key}

    def demand_key(self, connection, request):
        if "Authorization" not in request.headers:
            return connection.respond(HTTPStatus.UNAUTHORIZED, "an API key is required\n")
        return None


class FeaturesAsString(ZooServer):
    """Lists its features as one string instead of a list of strings."""

    def default_metadata(self):
        return {**super().default_metadata(), "features": ",".join(self.features)}


class ProtocolVersionTwo(ZooServer):
    """Says protocol_version 2 while speaking version 1."""

    def default_metadata(self):
        return {**super().default_metadata(), "protocol_version": 2}


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

    def check_batch_size(self, connection, n):
        pass

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


# ---------------------------------------------------------------- 10.1: reuse-feedback-obs


class LenientReuse(ZooServer):
    """Lists reuse-feedback-obs but answers a reuse it cannot honour."""

    def check_reuse(self, connection, env_ids, reuse):
        pass


class ReusesTerminalObservation(ZooServer):
    """Lists reuse-feedback-obs but keeps an episode's terminal observation reusable."""

    def remember(self, connection, env, obs):
        if obs is not None:
            super().remember(connection, env, obs)


class ReusesUnknownEnv(ZooServer):
    """Lists reuse-feedback-obs but fills an env it never saw with a blank observation."""

    def check_reuse(self, connection, env_ids, reuse):
        for env, reused in zip(env_ids.tolist(), reuse.tolist()):
            if reused and env not in connection.cache:
                connection.cache[env] = {"images": {}, "states": {}, "text": []}
        super().check_reuse(connection, env_ids, reuse)


class RejectsAllRowsReused(ZooServer):
    """Lists reuse-feedback-obs but refuses an infer whose every row is reused (nothing to send)."""

    def check_reuse(self, connection, env_ids, reuse):
        if reuse.all():
            raise ProtocolError("reuse", "the infer carries no observation")
        super().check_reuse(connection, env_ids, reuse)


class RejectsReuse(ZooServer):
    """Lists reuse-feedback-obs but closes on any infer that reuses."""

    def check_reuse(self, connection, env_ids, reuse):
        if reuse.any():
            raise ProtocolError("reuse", "reuse is not really implemented")


class GlobalReuseCache(ZooServer):
    """Keeps one reuse cache for the whole server instead of one per connection."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.shared_cache: dict[int, dict | None] = {}

    def remember(self, connection, env, obs):
        self.shared_cache[env] = obs

    def check_reuse(self, connection, env_ids, reuse):
        for env, reused in zip(env_ids.tolist(), reuse.tolist()):
            if reused and self.shared_cache.get(env) is None:
                raise ProtocolError("reuse", f"env {env} has no observation to reuse")


# ---------------------------------------------------------------- 7.1: the stop


class PlainStop(ZooServer):
    """Ends the run with a plain close: 1000 and no reason."""

    async def end_run(self):
        await self.shut_down(1000, "")


class WrongStopReason(ZooServer):
    """Ends the run with 1001 but a reason of its own."""

    async def end_run(self):
        await self.shut_down(GOING_AWAY, "training finished")


class NeverStops(ZooServer):
    """Is told to stop after a number of feedbacks but never does."""

    async def end_run(self):
        pass


# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class ZooEntry:
    """One broken server and how the suite must see it."""

    factory: Callable[..., ZooServer]
    clause: str  # the clause the suite must flag (fail for MUST, warn for SHOULD)
    options: dict[str, Any] = field(default_factory=dict)  # suite options over the tests' quick ones
    phases: tuple[str, ...] | None = None  # None: every default phase
    server_options: dict[str, Any] = field(default_factory=dict)
    knock_on: frozenset[str] = frozenset()  # other clauses the same fault may also fail
    may_error: bool = False  # the fault stops phases early, leaving some clauses `error`


def _clauses(*ids: str) -> frozenset[str]:
    return frozenset(ids)


RESYNC_CASES = _clauses(
    "plugrl.7.2.resync-malformed", "plugrl.7.2.resync-wrong-type", "plugrl.7.2.resync-not-msgpack",
    "plugrl.7.2.resync-bad-ndarray", "plugrl.4.2.resync-double-infer", "plugrl.5.4.resync-unsplittable-info",
    "plugrl.10.1.reuse-connection-scoped", "plugrl.10.1.reuse-unknown-env", "plugrl.10.1.reuse-after-terminal",
)
STOP_AFTER_FIVE = {"stop_after": 5}

ZOO: dict[str, ZooEntry] = {
    # the action and its env_ids
    "env-major": ZooEntry(EnvMajor, "plugrl.5.3.time-major"),
    "reshape-not-transpose": ZooEntry(ReshapeNotTranspose, "plugrl.5.3.rows-follow-envs"),
    "permuted-rows": ZooEntry(PermutedRows, "plugrl.5.3.rows-follow-envs"),
    "no-env-ids": ZooEntry(NoEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.env-ids-form")),
    "sorted-env-ids": ZooEntry(
        SortedEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.rows-follow-envs")
    ),
    "env-ids-msgpack-list": ZooEntry(
        EnvIdsAsList, "plugrl.5.3.env-ids-form", knock_on=_clauses("plugrl.4.3.env-ids-order")
    ),
    "env-ids-int32": ZooEntry(EnvIdsInt32, "plugrl.5.3.env-ids-form"),
    "wrong-horizon": ZooEntry(WrongHorizon, "plugrl.5.1.declared-horizon"),
    "wrong-action-dim": ZooEntry(WrongActionDim, "plugrl.5.1.declared-dim"),
    "varying-horizon": ZooEntry(VaryingHorizon, "plugrl.5.3.same-shape"),
    "bool-action": ZooEntry(BoolAction, "plugrl.5.3.action-numeric"),
    "action-as-list": ZooEntry(ActionAsList, "plugrl.5.3.action-array"),
    "empty-chunk": ZooEntry(EmptyChunk, "plugrl.5.3.horizon-positive"),
    "drifting-dtype": ZooEntry(DriftingDtype, "plugrl.5.3.same-dtype"),
    "nan-actions": ZooEntry(NaNActions, "plugrl.5.3.finite-values"),
    "short-ndarray": ZooEntry(ShortNdarray, "plugrl.3.2.ndarray-form", may_error=True),
    "invalid-msgpack": ZooEntry(InvalidMsgpack, "plugrl.2.msgpack-map", may_error=True),
    # the metadata
    "no-metadata": ZooEntry(NoMetadata, "plugrl.5.1.speaks-first", phases=("exchange",), may_error=True),
    "bare-metadata": ZooEntry(BareMetadata, "plugrl.5.1.speaks-first", may_error=True),
    # The second metadata also stands where the errors phase waits for a resync.
    "metadata-twice": ZooEntry(
        MetadataTwice, "plugrl.4.1.metadata-once", knock_on=RESYNC_CASES, may_error=True
    ),
    "features-string": ZooEntry(FeaturesAsString, "plugrl.5.1.features-list"),
    "horizon-as-string": ZooEntry(HorizonAsString, "plugrl.5.1.declared-ints"),
    "requires-api-key": ZooEntry(
        RequiresApiKey, "plugrl.1.websocket-handshake", phases=("exchange",), may_error=True
    ),
    "protocol-version-2": ZooEntry(ProtocolVersionTwo, "plugrl.10.protocol-version"),
    # protocol errors
    "traceback-then-1011": ZooEntry(TracebackThen1011, "plugrl.2.binary-frames", knock_on=RESYNC_CASES),
    "malformed-infer-1011": ZooEntry(MalformedInfer1011, "plugrl.7.2.resync-malformed"),
    "malformed-infer-1000": ZooEntry(MalformedInfer1000, "plugrl.7.2.resync-malformed"),
    "malformed-infer-wrong-reason": ZooEntry(MalformedInferWrongReason, "plugrl.7.2.resync-malformed"),
    "lenient": ZooEntry(Lenient, "plugrl.7.2.resync-malformed"),
    "ignores-stray-messages": ZooEntry(IgnoresStrayMessages, "plugrl.7.2.resync-wrong-type"),
    "skips-undecodable-frames": ZooEntry(SkipsUndecodableFrames, "plugrl.7.2.resync-not-msgpack"),
    "crashes-on-bad-ndarray": ZooEntry(CrashesOnBadNdarray, "plugrl.7.2.resync-bad-ndarray"),
    "hangs-on-malformed-infer": ZooEntry(HangsOnMalformedInfer, "plugrl.7.2.resync-malformed"),
    "dies-on-unsplittable-info": ZooEntry(
        DiesOnInfo,
        "plugrl.7.2.accepts-after-error",
        knock_on=_clauses("plugrl.5.4.resync-unsplittable-info", "plugrl.7.2.bystander-survives"),
        may_error=True,
    ),
    # Its reuse phase ends in a resync too, which takes the reuse holder down with it.
    "drops-bystanders": ZooEntry(
        DropsBystanders, "plugrl.7.2.bystander-survives", knock_on=_clauses("plugrl.4.2.keeps-open"), may_error=True
    ),
    "accepts-two-infers": ZooEntry(AcceptsTwoInfers, "plugrl.4.2.resync-double-infer"),
    "stores-unsplittable-info": ZooEntry(StoresUnsplittableInfo, "plugrl.5.4.resync-unsplittable-info"),
    # what it accepts
    "positional-feedback": ZooEntry(PositionalFeedback, "plugrl.4.3.feedback-set", may_error=True),
    # The reuse phase also shrinks a batch from 2 envs to 1.
    "fixed-batch-size": ZooEntry(
        FixedBatch, "plugrl.5.2.ragged-batches", knock_on=_clauses("plugrl.5.3.answered-with-action"), may_error=True
    ),
    # Later phases also send nested episode info; the exchange phase alone shows the fault.
    "flat-info-only": ZooEntry(FlatInfoOnly, "plugrl.5.4.nested-info", phases=("exchange",), may_error=True),
    "global-env-state": ZooEntry(GlobalEnvState, "plugrl.4.4.connection-scoped", phases=("scoping",)),
    "recycles-connections": ZooEntry(
        RecyclesConnections, "plugrl.4.2.keeps-open", phases=("exchange",), may_error=True
    ),
    "one-mib-frame-cap": ZooEntry(OneMebibyteCap, "plugrl.1.1.large-frame", may_error=True),
    "negotiates-deflate": ZooEntry(NegotiatesDeflate, "plugrl.1.1.no-compression"),
    "impatient-feedback-timeout": ZooEntry(
        ImpatientFeedback, "plugrl.7.3.late-feedback", options={"patience": 1.5}
    ),
    "counts-gone-clients": ZooEntry(
        CountsGoneClients, "plugrl.5.3.answered-with-action", phases=("exchange",), may_error=True
    ),
    # reuse-feedback-obs
    "lenient-reuse": ZooEntry(
        LenientReuse,
        "plugrl.10.1.reuse-after-terminal",
        knock_on=_clauses("plugrl.10.1.reuse-unknown-env", "plugrl.10.1.reuse-connection-scoped"),
    ),
    "reuses-terminal-observation": ZooEntry(ReusesTerminalObservation, "plugrl.10.1.reuse-after-terminal"),
    # A fresh connection's env was never fed back on it either.
    "reuses-unknown-env": ZooEntry(
        ReusesUnknownEnv, "plugrl.10.1.reuse-unknown-env", knock_on=_clauses("plugrl.10.1.reuse-connection-scoped")
    ),
    "rejects-all-rows-reused": ZooEntry(RejectsAllRowsReused, "plugrl.10.1.reuse-all-rows", may_error=True),
    "rejects-valid-reuse": ZooEntry(RejectsReuse, "plugrl.10.1.reuse-answered", may_error=True),
    "global-reuse-cache": ZooEntry(GlobalReuseCache, "plugrl.10.1.reuse-connection-scoped"),
    # the stop
    "plain-stop": ZooEntry(PlainStop, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE),
    "wrong-stop-reason": ZooEntry(
        WrongStopReason, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "never-stops": ZooEntry(
        NeverStops, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE,
        options={"max_exchanges": 20},
    ),
}
