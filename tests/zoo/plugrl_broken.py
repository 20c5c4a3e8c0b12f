"""The zoo: PlugRL training servers that are conforming except for ONE fault each.

Every server is the conforming `ZooServer` (`plugrl_core.py`) with one hook
overridden (`plugrl_faults_content.py`: what it sends; `plugrl_faults_behaviour.py`:
how it behaves). `ZOO` maps a name to what the tests need: the server's
factory, the clause id the `plugrl-server` suite must flag, and how to run
the suite against it (phases, options, which other clauses the same fault
may also fail).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.zoo.plugrl_core import ZooServer
from tests.zoo.plugrl_faults_behaviour import (
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
from tests.zoo.plugrl_faults_content import (
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
from tests.zoo.plugrl_faults_reuse import (
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


def _feedback_timeout_entry(factory: Callable[..., ZooServer], clause: str) -> ZooEntry:
    return ZooEntry(
        factory, clause, options=ONE_SECOND_FEEDBACK, phases=("feedback-timeout",), server_options=ONE_SECOND_FEEDBACK
    )


ZOO: dict[str, ZooEntry] = {
    # the action and its env_ids
    "env-major": ZooEntry(EnvMajor, "plugrl.5.3.time-major"),
    "reshape-not-transpose": ZooEntry(ReshapeNotTranspose, "plugrl.5.3.rows-follow-envs"),
    "permuted-rows": ZooEntry(PermutedRows, "plugrl.5.3.rows-follow-envs"),
    # SPEC.md 5.3: an observation-driven policy is judged, however its server lays the rows out.
    "sorted-rows": ZooEntry(SortedRows, "plugrl.5.3.rows-follow-envs"),
    "no-env-ids": ZooEntry(NoEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.env-ids-form")),
    "sorted-env-ids": ZooEntry(
        SortedEnvIds, "plugrl.4.3.env-ids-order", knock_on=_clauses("plugrl.5.3.rows-follow-envs")
    ),
    "env-ids-msgpack-list": ZooEntry(
        EnvIdsAsList, "plugrl.5.3.env-ids-form", knock_on=_clauses("plugrl.4.3.env-ids-order")
    ),
    "env-ids-int32": ZooEntry(EnvIdsInt32, "plugrl.5.3.env-ids-form"),
    # SPEC.md 5.3: env_ids is exactly <i8 [n]; the values, in order, are right in both.
    "env-ids-big-endian": ZooEntry(EnvIdsBigEndian, "plugrl.5.3.env-ids-form"),
    "env-ids-column": ZooEntry(EnvIdsColumn, "plugrl.5.3.env-ids-form"),
    "flat-action-h1": ZooEntry(FlatAction, "plugrl.5.3.action-array"),
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
    "metadata-twice": ZooEntry(MetadataTwice, "plugrl.4.1.metadata-once", may_error=True),
    # Its features are unreadable, so the suite takes reuse as not offered, yet the server honours one.
    "features-string": ZooEntry(
        FeaturesAsString, "plugrl.5.1.features-list", knock_on=_clauses("plugrl.10.1.reuse-unoffered")
    ),
    "horizon-as-string": ZooEntry(HorizonAsString, "plugrl.5.1.declared-ints"),
    "requires-api-key": ZooEntry(RequiresApiKey, "plugrl.1.websocket-handshake", phases=("exchange",), may_error=True),
    "protocol-version-2": ZooEntry(ProtocolVersionTwo, "plugrl.10.protocol-version"),
    # protocol errors
    "traceback-then-1011": ZooEntry(TracebackThen1011, "plugrl.2.binary-frames", knock_on=RESYNC_CASES),
    "malformed-infer-1011": ZooEntry(MalformedInfer1011, "plugrl.7.2.resync-malformed"),
    "malformed-infer-1000": ZooEntry(MalformedInfer1000, "plugrl.7.2.resync-malformed"),
    "malformed-infer-wrong-reason": ZooEntry(MalformedInferWrongReason, "plugrl.7.2.resync-malformed"),
    "lenient": ZooEntry(Lenient, "plugrl.7.2.resync-malformed"),
    "resync-trailing-space": ZooEntry(
        ResyncWithTrailingSpace, "plugrl.7.2.resync-malformed", knock_on=RESYNC_CASES - {"plugrl.7.2.resync-malformed"}
    ),
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
    "one-mib-frame-cap": ZooEntry(OneMebibyteCap, "plugrl.1.1.large-frame"),
    # Its thirteenth infer is the exchange phase's last; the errors phase's bystander asks more.
    "tires-after-thirteen-infers": ZooEntry(
        TiresAfterThirteenInfers, "plugrl.5.3.answered-with-action", phases=("exchange", "errors"), may_error=True
    ),
    "one-connection-at-a-time": ZooEntry(OneConnectionAtATime, "plugrl.6.concurrent-clients", may_error=True),
    "negotiates-deflate": ZooEntry(NegotiatesDeflate, "plugrl.1.1.no-compression"),
    "impatient-feedback-timeout": ZooEntry(ImpatientFeedback, "plugrl.7.3.late-feedback", options={"patience": 1.5}),
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
    "reuses-by-position": ZooEntry(ReusesByPosition, "plugrl.10.1.reuse-rows"),
    "pads-short-reuse": ZooEntry(PadsShortReuse, "plugrl.10.1.reuse-malformed"),
    "takes-first-rows": ZooEntry(TakesFirstRows, "plugrl.10.1.reuse-malformed"),
    "honours-unlisted-reuse": ZooEntry(HonoursUnlistedReuse, "plugrl.10.1.reuse-unoffered"),
    "crashes-on-integer-mask": ZooEntry(CrashesOnIntegerMask, "plugrl.10.1.reuse-integer-mask-handled"),
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
    "plain-stop": ZooEntry(PlainStop, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE),
    "wrong-stop-reason": ZooEntry(
        WrongStopReason, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "stop-with-1000": ZooEntry(
        StopsWith1000, "plugrl.7.1.stop-close", phases=("stop",), server_options=STOP_AFTER_FIVE
    ),
    "never-stops": ZooEntry(
        NeverStops,
        "plugrl.7.1.stop-close",
        phases=("stop",),
        server_options=STOP_AFTER_FIVE,
        options={"max_exchanges": 20},
    ),
}
