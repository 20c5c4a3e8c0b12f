"""The rlmesh parity script: the same seeds and the same sampled actions give the same lanes.

One Join session: a reset with seed `seed + i` on lane i and fixed episode
ids, then `steps` actions sampled from the contract's action space with a
seeded generator (so both targets get the very same action bytes, provided
their contracts agree, which is recorded too). Each lane's observation leaves,
reward and terminated/truncated flags are recorded per step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pydantic

from checks.core import Report, Transcript
from checks.parity.script import ExactScript, NotRecorded, Observed, ParityOptions
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, RpcFailed, error_text
from checks.rlmesh.common import Contract, fetch_contract, kind_of, reset_request, step_request
from checks.rlmesh.proto import env_pb2, spaces_pb2


class RlmeshParityOptions(ParityOptions):
    seed: int = pydantic.Field(0, ge=0, lt=2**62, description="Base seed; lane i is seeded with seed + i.")
    steps: int = pydantic.Field(12, ge=1, le=10_000, description="Steps sent after the seeded reset.")
    max_message_bytes: int = pydantic.Field(
        16 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="Largest message accepted from the target."
    )


def lane_values(contract: Contract, value: spaces_pb2.SpaceValue, lanes: int) -> list[Any]:
    """Each lane's observation: its leaves in space order (arrays, or text)."""
    try:
        leaves = codec.decode(contract.obs, value, lanes)
    except codec.ValueMismatch as exc:
        return [{"undecodable": str(exc)}] * lanes
    return [[leaf[lane] for leaf in leaves] for lane in range(lanes)]


def answer(response: env_pb2.JoinResponse) -> dict[str, Any] | None:
    """Why a response is not the step or reset it should be, as a value both sides can be compared on."""
    kind = kind_of(response)
    if kind == "error":
        return {"error": error_text(response.error)}
    return None if kind in ("step", "reset") else {"unexpected": kind}


class RlmeshScript(ExactScript):
    kind = "rlmesh"
    version = "1"
    options_model = RlmeshParityOptions
    recorded_inputs = frozenset({"seed", "steps"})
    leading: tuple[str, ...] = ("contract",)  # the env contract the lanes follow from

    async def observe(self, url: str, options: RlmeshParityOptions, report: Report) -> Observed:
        transcript = report.transcript("Join: parity")
        async with Endpoint(url, options.timeout, options.max_message_bytes) as target:
            try:
                contract = await fetch_contract(target, transcript)
                return await self._drive(target, contract, options, transcript)
            except (RpcFailed, JoinEnded) as exc:
                raise NotRecorded(str(exc)) from None

    async def _drive(
        self, target: Endpoint, contract: Contract, options: RlmeshParityOptions, transcript: Transcript
    ) -> Observed:
        lanes = contract.num_envs
        seeds = [options.seed + lane for lane in range(lanes)]
        ids = [f"rlconform-parity-{lane}" for lane in range(lanes)]
        rng = np.random.default_rng([options.seed, 13])
        actions = [codec.sample(contract.act, rng, lanes) for _ in range(options.steps)]
        session, first = await target.join(transcript, reset_request(seeds, ids))
        per_lane: list[dict[str, Any]] = [{"reset": None, "steps": []} for _ in range(lanes)]
        try:
            problem = answer(first)
            observations = lane_values(contract, first.reset.observation, lanes) if problem is None else []
            for lane in range(lanes):
                per_lane[lane]["reset"] = problem or observations[lane]
            for action in actions:
                problem = await self._step(session, contract, action, per_lane)
                if problem is not None:
                    break
        finally:
            await session.close()
        values = {
            "contract": contract.response.env_contract.SerializeToString(deterministic=True),
            "lanes": per_lane,
        }
        return Observed(values, summary=f"{lanes} lanes, {options.steps} steps")

    async def _step(
        self, session: JoinSession, contract: Contract, action: spaces_pb2.SpaceValue, per_lane: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        response = await session.request(step_request(action))
        problem = answer(response)
        lanes = len(per_lane)
        if problem is not None:
            for lane in range(lanes):
                per_lane[lane]["steps"].append(problem)
            return problem
        body = response.step
        observations = lane_values(contract, body.observation, lanes)
        rewards = list(body.rewards)
        for lane in range(lanes):
            per_lane[lane]["steps"].append(
                {
                    "observation": observations[lane],
                    "reward": rewards[lane] if lane < len(rewards) else None,
                    "terminated": body.terminated_mask[lane : lane + 1],
                    "truncated": body.truncated_mask[lane : lane + 1],
                }
            )
        return None


SCRIPT = RlmeshScript()
