"""The rllink suite's options, its per-run state, and the context type its phases get."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pydantic

from checks.core import PhaseContext, SuiteOptions
from checks.rllink.codec import DEFAULT_FRAME_CAP, HEADER_LIMIT, Dialect
from checks.rllink.link import Link


class RLlinkOptions(SuiteOptions):
    dialect: Literal["auto", "json", "msgpack"] = pydantic.Field(
        "auto",
        description="Body encoding: json (Ray 2.41-2.48), msgpack (Ray 2.49 on), or auto (try msgpack, then json).",
    )
    obs_shape: list[int] = pydantic.Field(
        [4], min_length=1, max_length=4, description="Observation Box shape (CartPole: [4])."
    )
    obs_dtype: Literal["float32", "float64"] = pydantic.Field("float32", description="Observation Box dtype.")
    obs_low: float = pydantic.Field(-0.05, description="Lowest value the checker puts in an observation.")
    obs_high: float = pydantic.Field(0.05, description="Highest value the checker puts in an observation.")
    action_space: Literal["discrete", "box"] = pydantic.Field("discrete", description="Discrete(n) or Box actions.")
    action_n: int = pydantic.Field(2, ge=1, le=100_000, description="n of a Discrete action space (CartPole: 2).")
    action_dim: int = pydantic.Field(1, ge=1, le=4096, description="Width of a Box action space.")
    action_low: float = pydantic.Field(-1.0, description="Lower bound of a Box action space.")
    action_high: float = pydantic.Field(1.0, description="Upper bound of a Box action space.")
    fragment_length: int | None = pydantic.Field(
        None,
        ge=1,
        le=1_000_000,
        description="Env steps per on-policy batch, when SET_CONFIG does not state it readably.",
    )
    batches: int = pydantic.Field(3, ge=2, le=100, description="Full on-policy batches sent by the batches phase.")
    recycle_wait: float = pydantic.Field(
        6.0,
        gt=0,
        le=120,
        description=(
            "Back-off in seconds the server is given after a connection ends (RLlib recycles ~5 s); "
            "a fresh connection's PONG within it ends the wait early."
        ),
    )
    quiet: float = pydantic.Field(
        0.5, gt=0, le=30, description="Seconds of silence that show no (extra) reply is coming."
    )
    second_client_wait: float = pydantic.Field(
        3.0, gt=0, le=120, description="Seconds a second client waits for its PONG before it counts as left hanging."
    )
    frame_cap: int = pydantic.Field(
        DEFAULT_FRAME_CAP, ge=1024 * 1024, le=HEADER_LIMIT, description="Largest body the checker accepts, in bytes."
    )

    @pydantic.field_validator("obs_shape")
    @classmethod
    def _positive(cls, shape: list[int]) -> list[int]:
        if any(n < 1 or n > 4096 for n in shape):
            raise ValueError("every obs_shape entry must be 1..4096")
        return shape

    @property
    def obs_size(self) -> int:
        size = 1
        for n in self.obs_shape:
            size *= n
        return size

    @property
    def logits(self) -> int:
        """Width of the action distribution's inputs: n logits, or a Box's mean and log-std."""
        return self.action_n if self.action_space == "discrete" else 2 * self.action_dim


@dataclass
class RLlinkState:
    """What the phases of one run learn and share."""

    dialect: Dialect | None = None
    link: Link | None = None  # the connection phases keep using (RLlib recycles ~5 s on every close)
    fragment_length: int | None = None
    fragment_source: str = ""
    seqs: list[int] = field(default_factory=list)

    async def aclose(self) -> None:
        """The suite's teardown: close the connection the phases shared, shown in its transcript."""
        if self.link is not None:
            link, self.link = self.link, None
            await link.close("closed by checker at the end of the run")


Ctx = PhaseContext[RLlinkOptions, RLlinkState]
