"""The rllink-client zoo: env runners that conform except for ONE fault each.

Each is the reference client (`checks/rllink_client/reference.py`) with one decision
overridden; `start` is its class, graded on its entry's one phase.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.core import Verdict
from tests.zoo.entry import ZooEntry
from tests.zoo.rllink_client import broken


@dataclass(frozen=True, kw_only=True)
class RLlinkClientEntry(ZooEntry):
    """A broken client; `start` is its class."""

    verdict: Verdict = Verdict.FAIL  # WARN: the clause is a SHOULD
    dialect: str = "json"


ZOO: dict[str, RLlinkClientEntry] = {
    "WaitsForGreeting": RLlinkClientEntry(broken.WaitsForGreeting, "rllink-client.connect.speaks", phases=("session",)),
    "SkipsPing": RLlinkClientEntry(
        broken.SkipsPing, "rllink-client.handshake.ping-first", phases=("session",), verdict=Verdict.WARN
    ),
    "EpisodesBeforeState": RLlinkClientEntry(
        broken.EpisodesBeforeState, "rllink-client.handshake.config-state-first", phases=("session",)
    ),
    "SpacePaddedHeader": RLlinkClientEntry(broken.SpacePaddedHeader, "rllink-client.frame.header", phases=("session",)),
    "LowerCaseTypes": RLlinkClientEntry(broken.LowerCaseTypes, "rllink-client.frame.type", phases=("session",)),
    "PipelinesBatches": RLlinkClientEntry(broken.PipelinesBatches, "rllink-client.req-resp.waits", phases=("session",)),
    "WaitsAfterEpisodes": RLlinkClientEntry(
        broken.WaitsAfterEpisodes, "rllink-client.req-resp.episodes-no-reply", phases=("session",)
    ),
    "CountsObservations": RLlinkClientEntry(broken.CountsObservations, "rllink-client.batch.size", phases=("session",)),
    "EnvStepsKey": RLlinkClientEntry(
        broken.EnvStepsKey, "rllink-client.batch.timesteps", phases=("session",), verdict=Verdict.WARN
    ),
    "NoLogp": RLlinkClientEntry(broken.NoLogp, "rllink-client.episode.fields", phases=("session",)),
    "DropsResetObservation": RLlinkClientEntry(
        broken.DropsResetObservation, "rllink-client.episode.shape", phases=("session",)
    ),
    "OneBasedActions": RLlinkClientEntry(broken.OneBasedActions, "rllink-client.values.spaces", phases=("session",)),
    "LogpFromLogits": RLlinkClientEntry(broken.LogpFromLogits, "rllink-client.values.logp", phases=("session",)),
    "IgnoresNewWeights": RLlinkClientEntry(
        broken.IgnoresNewWeights, "rllink-client.onpolicy.weights", phases=("session",)
    ),
    "NewIdPerChunk": RLlinkClientEntry(
        broken.NewIdPerChunk, "rllink-client.chunk.continuity", phases=("session",), dialect="msgpack"
    ),
}
