"""The rllink-client suite's options, per-run state, and the context type its phases get."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import pydantic

from checks.core import PhaseContext
from checks.listen import ListenOptions
from checks.rllink.codec import Dialect
from checks.rllink_client.policy import Policy


class HeldConnection(Protocol):
    """An open client connection the run holds (a `Conversation`), closed by the reconnect phase."""

    async def close(self) -> None: ...


class RLlinkClientOptions(ListenOptions):
    dialect: Literal["auto", "json", "msgpack"] = pydantic.Field(
        "auto",
        description="Body encoding the run serves: json (Ray 2.41-2.48), msgpack (Ray 2.49 on), or auto "
        "(the dialect of the client's first frame).",
    )
    fragment_length: int = pydantic.Field(
        32, ge=1, le=100_000, description="Env steps per on-policy batch, advertised in SET_CONFIG."
    )
    batches: int = pydantic.Field(2, ge=1, le=100, description="On-policy batches the session phase waits for.")
    obs_dim: int = pydantic.Field(4, ge=1, le=4096, description="Observation Box width (CartPole: 4).")
    actions: int = pydantic.Field(2, ge=2, le=1000, description="n of the Discrete action space (CartPole: 2).")
    tolerance: float = pydantic.Field(
        1e-3, gt=0, le=1, description="Absolute tolerance for action_dist_inputs and action_logp."
    )
    reply_delay: float = pydantic.Field(
        0.2, ge=0.05, le=10, description="Seconds the checker waits before each reply, watching for pipelined frames."
    )
    recycle: float = pydantic.Field(
        5.0, gt=0, le=120, description="Seconds the listener stays closed after the checker ends the session."
    )
    reconnect_window: float = pydantic.Field(
        8.0, gt=0, le=300, description="Seconds after listening resumes during which a reconnect is awaited."
    )


@dataclass
class RunState:
    """What the phases of one run share: the dialect, the policy served, the open client connection."""

    dialect: Dialect | None = None
    policy: Policy | None = None
    held: list[HeldConnection] = field(default_factory=list)  # open connections, closed by the reconnect phase


Ctx = PhaseContext[RLlinkClientOptions, RunState]
