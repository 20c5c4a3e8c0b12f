"""The step limit an env declares on the wire, and whether its episodes end by it (`rlmesh.s2.step-limit`).

The wire has no field for a time limit: gymnasium keeps `max_episode_steps` in
`env.spec`, which the 0.1.0 server does not send (CartPole's 500 never reaches
the wire). An env can still declare one in the contract's spec metadata, at the
top level or under a `spec` map, and then a client may rely on it. The episodes
phase counts into a `StepLimitWatch`; `judging_episodes.step_limit` decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checks.core import truncate
from checks.rlmesh import codec
from checks.rlmesh.common import Contract

LIMIT_KEY = "max_episode_steps"


def positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:  # bool is an int; NaN
        return None
    return int(value) if value == int(value) and value > 0 else None


@dataclass
class StepLimitWatch:
    """What the episodes did at the declared limit, from the steps the episodes phase counts per lane."""

    limit: int | None
    source: str
    overrun: str | None = None  # the first episode stepped past the limit without ending
    reached: str | None = None  # the first episode that ran to the limit and ended by then
    longest: int = 0  # the most steps an ended episode took

    @classmethod
    def declared_by(cls, contract: Contract) -> StepLimitWatch:
        metadata = codec.map_to_python(contract.response.env_contract.spec.metadata)
        for source, scope in (("metadata", metadata), ("metadata.spec", metadata.get("spec"))):
            if isinstance(scope, dict) and LIMIT_KEY in scope:
                return cls(
                    positive_int(scope[LIMIT_KEY]), f"{source}.{LIMIT_KEY} = {truncate(repr(scope[LIMIT_KEY]), 40)}"
                )
        return cls(None, "")

    def stepped(self, lane: int, episode_id: str, steps: int, ended: bool, where: str) -> None:
        if self.limit is None:
            return
        if ended:
            self.longest = max(self.longest, steps)
            if steps >= self.limit and self.reached is None:
                self.reached = f"{where}: lane {lane} episode {truncate(episode_id, 40)!r} ended after {steps} steps"
        elif steps > self.limit and self.overrun is None:
            self.overrun = (
                f"{where}: lane {lane} episode {truncate(episode_id, 40)!r} has taken {steps} steps "
                "and is neither terminated nor truncated"
            )
