"""The plugrl-client zoo: env clients that conform except for ONE fault each.

Each is the reference client (`checks/plugrl_client/reference.py`) with one decision
overridden; `start` is its class, graded on its entry's one phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.core import Verdict
from tests.zoo.entry import ZooEntry
from tests.zoo.plugrl_client import forms, lifecycle, probe, transport


@dataclass(frozen=True, kw_only=True)
class PlugRLClientEntry(ZooEntry):
    """A broken client; `start` is its class."""

    verdict: Verdict = Verdict.FAIL  # WARN: the clause is a SHOULD
    sessions: int = 6  # client sessions the grading waits for


ZOO: dict[str, PlugRLClientEntry] = {
    "EarlyInfer": PlugRLClientEntry(transport.EarlyInfer, "plugrl-client.5.1.metadata-first", phases=("basic",)),
    "OffersDeflate": PlugRLClientEntry(transport.OffersDeflate, "plugrl-client.1.1.no-compression", phases=("basic",)),
    "FrameCap": PlugRLClientEntry(transport.FrameCap, "plugrl-client.1.1.large-frame", phases=("basic",)),
    "JsonText": PlugRLClientEntry(transport.JsonText, "plugrl-client.2.binary-frames", phases=("basic",)),
    "StrKeyArrays": PlugRLClientEntry(transport.StrKeyArrays, "plugrl-client.3.2.ndarray-form", phases=("basic",)),
    "BinMessageType": PlugRLClientEntry(transport.BinMessageType, "plugrl-client.2.msgpack-map", phases=("basic",)),
    "NoStepIds": PlugRLClientEntry(transport.NoStepIds, "plugrl-client.5.2.infer-form", phases=("basic",)),
    "DoubleInfer": PlugRLClientEntry(transport.DoubleInfer, "plugrl-client.4.2.alternation", phases=("basic",)),
    "HardcodedFloat32": PlugRLClientEntry(probe.HardcodedFloat32, "plugrl-client.5.3.time-major", phases=("basic",)),
    "EnvMajor": PlugRLClientEntry(probe.EnvMajor, "plugrl-client.5.3.time-major", phases=("basic",)),
    "LastStepReward": PlugRLClientEntry(probe.LastStepReward, "plugrl-client.5.4.chunk-sum-reward", phases=("basic",)),
    "ResetInStep": PlugRLClientEntry(probe.ResetInStep, "plugrl-client.5.4.terminal-observation", phases=("basic",)),
    "StepsPastTerminal": PlugRLClientEntry(
        probe.StepsPastTerminal, "plugrl-client.5.4.stops-at-terminal", phases=("basic",)
    ),
    "StaleObservation": PlugRLClientEntry(
        probe.StaleObservation, "plugrl-client.8.1.infer-continues", phases=("basic",)
    ),
    "ReusesUnoffered": PlugRLClientEntry(
        probe.ReusesUnoffered, "plugrl-client.10.1.reuse-only-offered", phases=("basic",)
    ),
    "ReusesTerminal": PlugRLClientEntry(probe.ReusesTerminal, "plugrl-client.10.1.reuse-held-only", phases=("reuse",)),
    "ResendsFeedback": PlugRLClientEntry(
        lifecycle.ResendsFeedback, "plugrl-client.7.6.fresh-infer-after-reconnect", phases=("resync",)
    ),
    "IgnoresStop": PlugRLClientEntry(
        lifecycle.IgnoresStop, "plugrl-client.7.1.no-reconnect-after-stop", phases=("basic",), verdict=Verdict.WARN
    ),
    "ExitsOnResync": PlugRLClientEntry(
        lifecycle.ExitsOnResync, "plugrl-client.7.2.reconnects-after-resync", phases=("resync",), sessions=1
    ),
    "IgnoresText": PlugRLClientEntry(lifecycle.IgnoresText, "plugrl-client.7.4.text-fatal", phases=("text",)),
    "RejectsUnknownKeys": PlugRLClientEntry(
        forms.RejectsUnknownKeys, "plugrl-client.5.1.unknown-keys", phases=("basic",)
    ),
    "SkipsFeedbackRow": PlugRLClientEntry(
        forms.SkipsFeedbackRow, "plugrl-client.8.one-feedback-per-action", phases=("basic",)
    ),
    "FeedsBackUnasked": PlugRLClientEntry(
        forms.FeedsBackUnasked, "plugrl-client.4.3.feedback-envs-held", phases=("basic",)
    ),
    "ExtraObservationKey": PlugRLClientEntry(
        forms.ExtraObservationKey, "plugrl-client.5.2.observation-form", phases=("basic",)
    ),
    "NoTruncated": PlugRLClientEntry(forms.NoTruncated, "plugrl-client.5.4.feedback-form", phases=("basic",)),
    "Float32States": PlugRLClientEntry(forms.Float32States, "plugrl-client.8.1.probe-observation", phases=("basic",)),
    "IdlesLastEnv": PlugRLClientEntry(forms.IdlesLastEnv, "plugrl-client.5.3.steps-within-horizon", phases=("basic",)),
    "StaleAfterInfer": PlugRLClientEntry(
        forms.StaleAfterInfer, "plugrl-client.7.6.no-stale-feedback", phases=("resync",)
    ),
}
