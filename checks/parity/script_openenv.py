"""The openenv parity script: the same seeds and the same actions on every lane give the same frames.

Each lane is one /ws session; all lanes move in lock-step (so the interleaving
is the same on both targets), lane i reset with seed `seed + i` and a fixed
episode id, then stepped through the actions of the options or of /schema.
Every reply frame (observation, reward, done, errors) and the final state is
recorded as decoded JSON.
"""

from __future__ import annotations

from typing import Any

import pydantic

from checks.core import PhaseContext, Report
from checks.openenv.episodes import play_group
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.options import Facts, OpenEnvOptions
from checks.openenv.session import Reply
from checks.parity.projections import Projection
from checks.parity.script import ExactScript, NotRecorded, Observed, ParityOptions


class OpenEnvParityOptions(ParityOptions):
    lanes: int = pydantic.Field(3, ge=1, le=32, description="Sessions driven side by side, lane i seeded seed + i.")
    seed: int = pydantic.Field(0, ge=0, lt=2**31, description="Seed of lane 0.")
    reset: dict[str, Any] = pydantic.Field(default_factory=dict, description="Other reset data for every lane.")
    actions: list[Any] | None = pydantic.Field(
        None, description="Step data, in order (JSON list). Default: the valid action generated from /schema.action."
    )
    max_steps: int = pydantic.Field(20, ge=1, le=1000, description="Most steps per lane.")


def frame(reply: Reply) -> Any:
    """What a lane saw in one reply: the decoded JSON, or what came instead."""
    if reply.failure is not None:
        return {"no_frame": reply.failure.split(":")[0]}
    if reply.binary:
        return {"binary": reply.raw.encode("latin-1")}
    return reply.message if reply.is_json else {"text": reply.raw}


class OpenEnvScript(ExactScript):
    kind = "openenv"
    version = "1"
    options_model = OpenEnvParityOptions
    recorded_inputs = frozenset({"lanes", "seed", "reset", "actions", "max_steps"})
    projections = (
        # A server that makes up its own episode ids may, as long as it uses them consistently.
        Projection("lanes[*].**.episode_id", "identity", "episode"),
    )

    async def observe(self, url: str, options: OpenEnvParityOptions, report: Report) -> Observed:
        suite_options = OpenEnvOptions(timeout=options.timeout, max_steps=options.max_steps, actions=options.actions)
        ctx = PhaseContext(url, suite_options, report, Facts())
        schema = await load_schema(ctx)
        actions = action_plan(suite_options, schema).valid
        if not actions:
            raise NotRecorded("no action to send: give `actions`, or serve a /schema whose action can be generated")
        resets = [
            {**options.reset, "seed": options.seed + lane, "episode_id": f"rlconform-parity-{lane}"}
            for lane in range(options.lanes)
        ]
        runs = await play_group(ctx, "parity", resets, [actions] * options.lanes, options.max_steps)
        lanes = [
            {
                "reset": frame(run.reset),
                "steps": [frame(step) for step in run.steps],
                "state": frame(run.state) if run.state is not None else None,
            }
            for run in runs
        ]
        steps = sum(len(run.steps) for run in runs)
        return Observed({"actions": actions, "lanes": lanes}, summary=f"{len(runs)} lanes, {steps} steps in all")


SCRIPT = OpenEnvScript()
