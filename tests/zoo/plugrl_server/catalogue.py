"""The zoo: PlugRL training servers that are conforming except for ONE fault each.

Every server is the conforming `ZooServer` (`core.py`) with one hook
overridden (`faults_content.py`: what it sends; `faults_behaviour.py`:
how it behaves). `ZOO` maps a name to what the tests need: the server's
factory, the clause id the `plugrl-server` suite must flag, and how to run
the suite against it (phases, options, which other clauses the same fault
may also fail).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.zoo.entry import ZooEntry
from tests.zoo.plugrl_server.core import ZooServer
from tests.zoo.plugrl_server.faults_behaviour import (
    AcceptsTwoInfers,
    CountsGoneClients,
    CrashesOnBadNdarray,
    DiesOnInfo,
    DropsBystanders,
    FeedbackTimeout1000,
    FeedbackTimeout1011,
    FeedbackTimeoutWrongReason,
    FixedBatch,
    FlatInfoOnly,
    GlobalEnvState,
    HalvesFeedbackTimeout,
    HangsOnMalformedInfer,
    HeartbeatWhileWaiting,
    IgnoresStrayMessages,
    ImpatientFeedback,
    Lenient,
    MalformedInfer1000,
    MalformedInfer1011,
    MalformedInferWrongReason,
    NegotiatesDeflate,
    NeverStops,
    NoFeedbackTimeout,
    OneConnectionAtATime,
    OneMebibyteCap,
    PlainStop,
    PositionalFeedback,
    RecyclesConnections,
    ResyncWithTrailingSpace,
    SkipsUndecodableFrames,
    StopsWith1000,
    StoresUnsplittableInfo,
    TiresAfterThirteenInfers,
    TracebackThen1011,
    WrongStopReason,
)
from tests.zoo.plugrl_server.faults_content import (
    ActionAsList,
    BareMetadata,
    BoolAction,
    DriftingDtype,
    EmptyChunk,
    EnvIdsAsList,
    EnvIdsBigEndian,
    EnvIdsColumn,
    EnvIdsInt32,
    EnvMajor,
    FeaturesAsString,
    FlatAction,
    HorizonAsString,
    InvalidMsgpack,
    MetadataTwice,
    NaNActions,
    NoEnvIds,
    NoMetadata,
    PermutedRows,
    ProtocolVersionTwo,
    RequiresApiKey,
    ReshapeNotTranspose,
    ShortNdarray,
    SortedEnvIds,
    SortedRows,
    VaryingHorizon,
    WrongActionDim,
    WrongHorizon,
)
from tests.zoo.plugrl_server.faults_reuse import (
    CrashesOnIntegerMask,
    GlobalReuseCache,
    HonoursUnlistedReuse,
    LenientReuse,
    PadsShortReuse,
    RejectsAllRowsReused,
    RejectsReuse,
    ReusesByPosition,
    ReusesTerminalObservation,
    ReusesUnknownEnv,
    TakesFirstRows,
)


@dataclass(frozen=True, kw_only=True)
class PlugRLServerEntry(ZooEntry):
    """A broken `ZooServer`: `start` is its class, started by `core.running(start, **server_options)`."""

    server_options: dict[str, Any] = field(default_factory=dict)


def _clauses(*ids: str) -> frozenset[str]:
    return frozenset(ids)


RESYNC_CASES = _clauses(
    "plugrl.7.2.resync-malformed",
    "plugrl.7.2.resync-wrong-type",
    "plugrl.7.2.resync-not-msgpack",
    "plugrl.7.2.resync-bad-ndarray",
    "plugrl.4.2.resync-double-infer",
    "plugrl.5.4.resync-unsplittable-info",
    "plugrl.10.1.reuse-connection-scoped",
    "plugrl.10.1.reuse-unknown-env",
    "plugrl.10.1.reuse-after-terminal",
    "plugrl.10.1.reuse-malformed",
    # A server that gets resyncs wrong also answers an integer mask with something other than a resync.
    "plugrl.10.1.reuse-integer-mask-handled",
)
STOP_AFTER_FIVE = {"stop_after": 5}
# The server and the checker agree on a one-second feedback timeout, so the phase takes seconds.
ONE_SECOND_FEEDBACK = {"feedback_timeout": 1.0}


def _feedback_timeout_entry(factory: Callable[..., ZooServer], clause: str) -> PlugRLServerEntry:
    return PlugRLServerEntry(
        factory, clause, options=ONE_SECOND_FEEDBACK, phases=("feedback-timeout",), server_options=ONE_SECOND_FEEDBACK
    )


ZOO: dict[str, PlugRLServerEntry] = {
    # the action and its env_ids
    "env-major": PlugRLServerEntry(EnvMajor, "plugrl.5.3.time-major"),
    "reshape-not-transpose": PlugRLServerEntry(ReshapeNotTranspose, "plugrl.5.3.rows-follow-envs"),
    "permuted-rows": PlugRLServerEntry(PermutedRows, "plugrl.5.3.rows-follow-envs"),
    # SPEC.md 5.3: an observation-driven policy is judged, however its server lays the rows out.
    "sorted-rows": PlugRLServerEntry(SortedRows, "plugrl.5.3.rows-follow-envs"),
    "no-env-ids": PlugRLServerEntry(NoEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.env-ids-form")),
    "sorted-env-ids": PlugRLServerEntry(
        SortedEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.rows-follow-envs")
    ),
    "env-ids-msgpack-list": PlugRLServerEntry(
        EnvIdsAsList, "plugrl.5.3.env-ids-form", knock_on=_clauses("plugrl.4.3.env-ids-order")
    ),
    "env-ids-int32": PlugRLServerEntry(EnvIdsInt32, "plugrl.5.3.env-ids-form"),
    # SPEC.md 5.3: env_ids is exactly <i8 [n]; the values, in order, are right in both.
    "env-ids-big-endian": PlugRLServerEntry(EnvIdsBigEndian, "plugrl.5.3.env-ids-form"),
    "env-ids-column": PlugRLServerEntry(EnvIdsColumn, "plugrl.5.3.env-ids-form"),
    "flat-action-h1": PlugRLServerEntry(FlatAction, "plugrl.5.3.action-array"),
    "wrong-horizon": PlugRLServerEntry(WrongHorizon, "plugrl.5.1.declared-horizon"),
    "wrong-action-dim": PlugRLServerEntry(WrongActionDim, "plugrl.5.1.declared-dim"),
    "varying-horizon": PlugRLServerEntry(VaryingHorizon, "plugrl.5.3.same-shape"),
    "bool-action": PlugRLServerEntry(BoolAction, "plugrl.5.3.action-numeric"),
    "action-as-list": PlugRLServerEntry(ActionAsList, "plugrl.5.3.action-array"),
    "empty-chunk": PlugRLServerEntry(EmptyChunk, "plugrl.5.3.horizon-positive"),
    "drifting-dtype": PlugRLServerEntry(DriftingDtype, "plugrl.5.3.same-dtype"),
    "nan-actions": PlugRLServerEntry(NaNActions, "plugrl.5.3.finite-values"),
    "short-ndarray": PlugRLServerEntry(ShortNdarray, "plugrl.3.2.ndarray-form", may_error=True),
    "invalid-msgpack": PlugRLServerEntry(InvalidMsgpack, "plugrl.2.msgpack-map", may_error=True),
    # the metadata
    "no-metadata": PlugRLServerEntry(NoMetadata, "plugrl.5.1.speaks-first", phases=("exchange",), may_error=True),
    "bare-metadata": PlugRLServerEntry(BareMetadata, "plugrl.5.1.speaks-first", may_error=True),
    "metadata-twice": PlugRLServerEntry(MetadataTwice, "plugrl.4.1.metadata-once", may_error=True),
    # Its features are unreadable, so the suite takes reuse as not offered, yet the server honours one.
    "features-string": PlugRLServerEntry(
        FeaturesAsString, "plugrl.5.1.features-list", knock_on=_clauses("plugrl.10.1.reuse-unoffered")
    ),
    "horizon-as-string": PlugRLServerEntry(HorizonAsString, "plugrl.5.1.declared-ints"),
    "requires-api-key": PlugRLServerEntry(
        RequiresApiKey, "plugrl.1.websocket-handshake", phases=("exchange",), may_error=True
    ),
    "protocol-version-2": PlugRLServerEntry(ProtocolVersionTwo, "plugrl.10.protocol-version"),
    # protocol errors
    "traceback-then-1011": PlugRLServerEntry(TracebackThen1011, "plugrl.2.binary-frames", knock_on=RESYNC_CASES),
    "malformed-infer-1011": PlugRLServerEntry(MalformedInfer1011, "plugrl.7.2.resync-malformed"),
    "malformed-infer-1000": PlugRLServerEntry(MalformedInfer1000, "plugrl.7.2.resync-malformed"),
    "malformed-infer-wrong-reason": PlugRLServerEntry(MalformedInferWrongReason, "plugrl.7.2.resync-malformed"),
    "lenient": PlugRLServerEntry(Lenient, "plugrl.7.2.resync-malformed"),
    "resync-trailing-space": PlugRLServerEntry(
        ResyncWithTrailingSpace, "plugrl.7.2.resync-malformed", knock_on=RESYNC_CASES - {"plugrl.7.2.resync-malformed"}
    ),
    "ignores-stray-messages": PlugRLServerEntry(IgnoresStrayMessages, "plugrl.7.2.resync-wrong-type"),
    "skips-undecodable-frames": PlugRLServerEntry(SkipsUndecodableFrames, "plugrl.7.2.resync-not-msgpack"),
    "crashes-on-bad-ndarray": PlugRLServerEntry(CrashesOnBadNdarray, "plugrl.7.2.resync-bad-ndarray"),
    "hangs-on-malformed-infer": PlugRLServerEntry(HangsOnMalformedInfer, "plugrl.7.2.resync-malformed"),
    "dies-on-unsplittable-info": PlugRLServerEntry(
        DiesOnInfo,
        "plugrl.7.2.accepts-after-error",
        knock_on=_clauses("plugrl.5.4.resync-unsplittable-info", "plugrl.7.2.bystander-survives"),
        may_error=True,
    ),
    # Its reuse phase ends in a resync too, which takes the reuse holder down with it.
    "drops-bystanders": PlugRLServerEntry(
        DropsBystanders, "plugrl.7.2.bystander-survives", knock_on=_clauses("plugrl.4.2.keeps-open"), may_error=True
    ),
    "accepts-two-infers": PlugRLServerEntry(AcceptsTwoInfers, "plugrl.4.2.resync-double-infer"),
    "stores-unsplittable-info": PlugRLServerEntry(StoresUnsplittableInfo, "plugrl.5.4.resync-unsplittable-info"),
    # what it accepts
    "positional-feedback": PlugRLServerEntry(PositionalFeedback, "plugrl.4.3.feedback-set", may_error=True),
    # The reuse phase also shrinks a batch from 2 envs to 1.
    "fixed-batch-size": PlugRLServerEntry(
        FixedBatch, "plugrl.5.2.ragged-batches", knock_on=_clauses("plugrl.5.3.answered-with-action"), may_error=True
    ),
    # Later phases also send nested episode info; the exchange phase alone shows the fault.
    "flat-info-only": PlugRLServerEntry(FlatInfoOnly, "plugrl.5.4.nested-info", phases=("exchange",), may_error=True),
    "global-env-state": PlugRLServerEntry(GlobalEnvState, "plugrl.4.4.connection-scoped", phases=("scoping",)),
    "recycles-connections": PlugRLServerEntry(
        RecyclesConnections, "plugrl.4.2.keeps-open", phases=("exchange",), may_error=True
    ),
    "one-mib-frame-cap": PlugRLServerEntry(OneMebibyteCap, "plugrl.1.1.large-frame"),
    # Its thirteenth infer is the exchange phase's last; the errors phase's bystander asks more.
    "tires-after-thirteen-infers": PlugRLServerEntry(
        TiresAfterThirteenInfers, "plugrl.5.3.answered-with-action", phases=("exchange", "errors"), may_error=True
    ),
    "one-connection-at-a-time": PlugRLServerEntry(OneConnectionAtATime, "plugrl.6.concurrent-clients", may_error=True),
    "negotiates-deflate": PlugRLServerEntry(NegotiatesDeflate, "plugrl.1.1.no-compression"),
    "impatient-feedback-timeout": PlugRLServerEntry(
        ImpatientFeedback, "plugrl.7.3.late-feedback", options={"patience": 1.5}
    ),
    "counts-gone-clients": PlugRLServerEntry(
        CountsGoneClients, "plugrl.5.3.answered-with-action", phases=("exchange",), may_error=True
    ),
    # reuse-feedback-obs
    "lenient-reuse": PlugRLServerEntry(
        LenientReuse,
        "plugrl.10.1.reuse-after-terminal",
        knock_on=_clauses("plugrl.10.1.reuse-unknown-env", "plugrl.10.1.reuse-connection-scoped"),
    ),
    "reuses-terminal-observation": PlugRLServerEntry(ReusesTerminalObservation, "plugrl.10.1.reuse-after-terminal"),
    # A fresh connection's env was never fed back on it either.
    "reuses-unknown-env": PlugRLServerEntry(
        ReusesUnknownEnv, "plugrl.10.1.reuse-unknown-env", knock_on=_clauses("plugrl.10.1.reuse-connection-scoped")
    ),
    "rejects-all-rows-reused": PlugRLServerEntry(RejectsAllRowsReused, "plugrl.10.1.reuse-all-rows", may_error=True),
    "rejects-valid-reuse": PlugRLServerEntry(RejectsReuse, "plugrl.10.1.reuse-answered", may_error=True),
    "global-reuse-cache": PlugRLServerEntry(GlobalReuseCache, "plugrl.10.1.reuse-connection-scoped"),
    "reuses-by-position": PlugRLServerEntry(ReusesByPosition, "plugrl.10.1.reuse-rows"),
    "pads-short-reuse": PlugRLServerEntry(PadsShortReuse, "plugrl.10.1.reuse-malformed"),
    "takes-first-rows": PlugRLServerEntry(TakesFirstRows, "plugrl.10.1.reuse-malformed"),
    "honours-unlisted-reuse": PlugRLServerEntry(HonoursUnlistedReuse, "plugrl.10.1.reuse-unoffered"),
    "crashes-on-integer-mask": PlugRLServerEntry(CrashesOnIntegerMask, "plugrl.10.1.reuse-integer-mask-handled"),
    # the feedback timeout
    "feedback-timeout-1011": _feedback_timeout_entry(FeedbackTimeout1011, "plugrl.7.3.feedback-timeout-close"),
    "feedback-timeout-1000": _feedback_timeout_entry(FeedbackTimeout1000, "plugrl.7.3.feedback-timeout-close"),
    "feedback-timeout-wrong-reason": _feedback_timeout_entry(
        FeedbackTimeoutWrongReason, "plugrl.7.3.feedback-timeout-close"
    ),
    "no-feedback-timeout": _feedback_timeout_entry(NoFeedbackTimeout, "plugrl.7.3.feedback-timeout-enforced"),
    "halves-feedback-timeout": _feedback_timeout_entry(HalvesFeedbackTimeout, "plugrl.7.3.feedback-wait"),
    "heartbeat-while-waiting": _feedback_timeout_entry(HeartbeatWhileWaiting, "plugrl.7.3.feedback-wait"),
    # the stop
    "plain-stop": PlugRLServerEntry(
        PlainStop, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "wrong-stop-reason": PlugRLServerEntry(
        WrongStopReason, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "stop-with-1000": PlugRLServerEntry(
        StopsWith1000, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "never-stops": PlugRLServerEntry(
        NeverStops,
        "plugrl.7.1.stop-close",
        phases=("stop",),
        server_options=STOP_AFTER_FIVE,
        options={"max_exchanges": 20},
    ),
}
