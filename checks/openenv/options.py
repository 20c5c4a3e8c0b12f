"""What a target tells the OpenEnv suite about itself, and what one run learns about it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pydantic
from pydantic import Field

from checks.core import PhaseContext, SuiteOptions
from checks.http_options import HttpOptions

if TYPE_CHECKING:
    from checks.openenv.session import Wait

DEFAULT_GROUP_SIZE = 5
DEFAULT_STEP_BUDGET = 20


class OpenEnvOptions(SuiteOptions, HttpOptions):
    actions: list[Any] | None = Field(
        None,
        description="Step data to replay, one episode each (JSON list). Default: a valid action "
        "generated from /schema.action plus invalid variants of it.",
    )
    reset: dict[str, Any] = Field(
        default_factory=dict, description='Reset data for every episode, e.g. {"task_id": "t1", "seed": 7}.'
    )
    contrast_task_id: str | None = Field(
        None, description="A second task id whose first observation must differ from reset.task_id's."
    )
    group_size: int | None = Field(
        None,
        ge=1,
        le=32,
        description="Sessions in one parallel group (the GRPO group size) the server must accept. Default: "
        f"{DEFAULT_GROUP_SIZE}, or the capacity the server shows when that is smaller (then capacity is not judged).",
    )
    expected_reward: float | None = Field(
        None, description="The final reward the scripted episode (the valid actions in order) must end with."
    )
    reward_range: tuple[float, float] | None = Field(
        None,
        description="The declared [low, high] of step rewards, judged when set. Default: none (nothing on the wire "
        "declares a range; OpenEnv's own envs give negative rewards), and the range seen is recorded.",
    )
    deterministic: bool = Field(
        False,
        description="The env's episodes are fully decided by the reset data and the actions, with or without a "
        "seed. Without it determinism and isolation are judged only when the reset data sets a seed that the run "
        "shows applied (the same seed gives the same first observation).",
    )
    seed_dependent: bool = Field(
        False,
        description="The env's episodes depend on the reset seed, so a seed that changes nothing is dropped. "
        "Without it openenv.reset.seed is judged only when unseeded episodes of this run differ.",
    )
    max_steps: int | None = Field(
        None,
        ge=1,
        le=1000,
        description="Declared maximum steps per episode: an episode must end within it. Without it the end of "
        f"an episode is not judged and {DEFAULT_STEP_BUDGET} steps are the budget of one episode.",
    )
    endless: bool = Field(False, description="The env's episodes never end (done is never true): nothing to judge.")
    crash_action: Any = Field(
        None, description="Step data the environment answers by raising, to exercise EXECUTION_ERROR."
    )
    latency_bound_ms: float | None = Field(
        None, gt=0, description="Bound for the one-socket reset+step round trip and the p99 under the group."
    )
    latency_rounds: int = Field(20, ge=1, le=500, description="Reset+step round trips measured on one socket.")
    oversize_bytes: int = Field(
        17 * 1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Size of the oversized text frame sent as hostile input (uvicorn refuses above 16 MiB).",
    )

    @property
    def step_budget(self) -> int:
        """Steps one scripted episode may take: the declared maximum, else the default budget."""
        return self.max_steps or DEFAULT_STEP_BUDGET

    @pydantic.field_validator("reward_range")
    @classmethod
    def _ordered(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and value[0] > value[1]:
            raise ValueError("reward_range low is above high")
        return value


@dataclass
class Facts:
    """What one run has learned about its target, shared between its phases.

    Each phase can still run alone: a fact not known yet is fetched by the
    phase that needs it, with its own transcript (see checks.openenv.facts).
    """

    schema: dict[str, Any] | None = None
    schema_fetched: bool = False
    openapi_paths: set[str] | None = None
    openapi_fetched: bool = False
    capacity: int | None = None  # sessions accepted at once when a limit was found
    greets: bool = False  # every new /ws session gets a frame before it sends anything
    # Whether the reset data's seed showed applied: two fresh sessions reset with it gave the same first
    # observation (None: not known yet, or the reset data sets no seed).
    seed_shown: bool | None = None
    waits: list[Wait] = field(default_factory=list)  # every wait for a reply in the run, for reply-in-time


Ctx = PhaseContext[OpenEnvOptions, Facts]


def group_size(ctx: Ctx) -> int:
    """The parallel group: the declared size, else the default kept within the capacity the run learned."""
    declared = ctx.options.group_size
    if declared is not None:
        return declared
    return min(DEFAULT_GROUP_SIZE, ctx.state.capacity or DEFAULT_GROUP_SIZE)
