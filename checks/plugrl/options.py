"""The plugrl-server suite's options, and the context type its phases get."""

from __future__ import annotations

import pydantic

from checks.core import PhaseContext, SuiteOptions
from checks.http_options import TransportOptions
from checks.plugrl.codec import DEFAULT_MAX_FRAME
from checks.plugrl.protocol import FEEDBACK_TIMEOUT

# The exchange phase's deadline, in timeouts: it takes 17 steps with the default 5 exchanges,
# each of which a slow but conforming policy may spend most of a timeout on.
EXCHANGE_BUDGET_STEPS = 20.0


class PlugRLServerOptions(SuiteOptions, TransportOptions):
    patience: float = pydantic.Field(
        5.0, ge=0, le=59, description="Seconds the patience phase waits before sending a feedback (SPEC allows 60)."
    )
    state_key: str = pydantic.Field("obs", min_length=1, description="Name of the states array sent to the policy.")
    state_dim: int = pydantic.Field(3, ge=1, le=4096, description="Width of the states array.")
    image_key: str | None = pydantic.Field(
        None, description="Name of a camera image to send too, if the policy needs one."
    )
    image_size: int = pydantic.Field(224, ge=1, le=2048, description="Height and width of that image.")
    exchanges: int = pydantic.Field(
        5,
        ge=1,
        le=1000,
        description=f"Plain infer/feedback rounds at the end of exchange (the phase has {EXCHANGE_BUDGET_STEPS:g} "
        "timeouts in all, so many rounds need a fast policy).",
    )
    feedback_timeout: float = pydantic.Field(
        FEEDBACK_TIMEOUT,
        gt=0,
        le=3600,
        description="Seconds the server is expected to wait for a feedback before it closes (SPEC 7.3: 60, "
        "unless raised on both sides); the feedback-timeout phase waits this plus a timeout.",
    )
    max_exchanges: int = pydantic.Field(
        2000, ge=1, le=1_000_000, description="Rounds the stop phase runs before it gives up waiting for the stop."
    )
    frame_cap: int = pydantic.Field(
        DEFAULT_MAX_FRAME, ge=1024 * 1024, le=1 << 30, description="Largest frame the checker accepts, in bytes."
    )
    api_key: pydantic.SecretStr | None = pydantic.Field(
        None, description="Sent as 'Authorization: Api-Key <key>' in every handshake (SPEC 1.2)."
    )


class RunState:
    """What one run has learned about the server, shared by its phases."""

    def __init__(self) -> None:
        # The connection whose close the server let wait out the close deadline without answering, if one
        # did: no later close waits for an answer that the server has shown it does not give.
        self.close_unanswered: str | None = None


Ctx = PhaseContext[PlugRLServerOptions, RunState]
