"""The plugrl-client suite's options, per-run state, and the context type its phases get."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pydantic

from checks.core import PhaseContext
from checks.listen import ListenOptions


class PlugRLClientOptions(ListenOptions):
    steps: int = pydantic.Field(12, ge=2, le=10_000, description="Feedbacks per scenario before the stop (or resync).")
    horizon: int = pydantic.Field(4, ge=1, le=64, description="Action horizon H of the chunks sent.")
    action_dim: int = pydantic.Field(
        3, ge=1, le=9, description="Width of one action (at most 9: the probe encodes the dim in one digit)."
    )
    action_dtype: Literal["float64", "float32"] = pydantic.Field(
        "float64", description="dtype of the actions; float64 catches clients that assume float32."
    )
    reconnect_window: float = pydantic.Field(
        2.0, gt=0, le=60, description="Seconds after a stop during which a reconnect counts as not exiting."
    )


@dataclass
class RunState:
    """What the run has seen of the client's probe envs: the episode step t each last reported."""

    last_t: dict[int, int] = field(default_factory=dict)
    ended: dict[int, bool] = field(default_factory=dict)
    lost: set[int] = field(default_factory=set)  # envs whose action was held when their connection ended


Ctx = PhaseContext[PlugRLClientOptions, RunState]
