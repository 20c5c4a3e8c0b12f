"""The rlmesh suite's options, the per-run state its phases share, and the phase context they make."""

from __future__ import annotations

import itertools

import pydantic

from checks.core import PhaseContext, SuiteOptions


class RlmeshOptions(SuiteOptions):
    seed: int = pydantic.Field(0, ge=0, lt=2**62, description="Base seed; lane i is seeded with seed + i.")
    episodes: int = pydantic.Field(2, ge=1, le=100, description="Episodes to finish on each exercised lane.")
    step_budget: int = pydantic.Field(400, ge=1, le=100_000, description="Most steps the episodes phase sends.")
    lanes: list[int] | None = pydantic.Field(
        None, description="Lanes to exercise in lane probes (default: the first two)."
    )
    latency_bound_ms: float | None = pydantic.Field(
        None, gt=0, description="Median step round-trip bound; without it step latency is information."
    )
    max_message_bytes: int = pydantic.Field(
        16 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="Largest message accepted from the target."
    )


class RlmeshRun:
    """What the phases of one run share: episode ids never repeat within a run, across all its sessions."""

    def __init__(self) -> None:
        self._batches = itertools.count(1)

    def episode_ids(self, lanes: int) -> list[str]:
        batch = next(self._batches)
        return [f"rlconform-{batch}-{lane}" for lane in range(lanes)]


Ctx = PhaseContext[RlmeshOptions, RlmeshRun]
