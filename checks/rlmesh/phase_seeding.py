"""Phase `seeding`: seeded replay, seeds reaching every lane, seed chain, seed-list length."""

from __future__ import annotations

import numpy as np

from checks.decision import record
from checks.rlmesh import codec, judging_lanes
from checks.rlmesh.client import Endpoint
from checks.rlmesh.common import Contract, finish_session, reset_request, rng_for, seeds_for, step_request
from checks.rlmesh.judging import kind_of
from checks.rlmesh.judging_lanes import Record
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import INVALID_ACTION, refused
from checks.rlmesh.proto import env_pb2, spaces_pb2
from checks.rlmesh.session import Seeded, opened, seeded_session

REPLAY_STEPS = 3


def lane_states(contract: Contract, value: spaces_pb2.SpaceValue, lanes: int) -> list[bytes]:
    return [codec.lane_bytes(contract.obs, value, lanes, lane) for lane in range(lanes)]


async def reset(seeded: Seeded, contract: Contract, seeds: list[int]) -> env_pb2.JoinResponse:
    request = reset_request(seeds, seeded.ctx.state.episode_ids(contract.num_envs))
    return await seeded.exchange(request, "reset", f"reset with seeds {seeds[:8]}")


async def rollout(
    seeded: Seeded, contract: Contract, seeds: list[int], actions: list[spaces_pb2.SpaceValue]
) -> list[Record]:
    """A seeded reset and a fixed action sequence, as comparable per-step records."""
    lanes = contract.num_envs
    first = await reset(seeded, contract, seeds)
    trace: list[Record] = [("reset", lane_states(contract, first.reset.observation, lanes))]
    for number, action in enumerate(actions, 1):
        response = await seeded.exchange(step_request(action, ids=[]), "step", f"replay step {number}")
        body = response.step
        # Rewards compared as bytes, so NaN equals NaN: replay is about sameness, finiteness is judged elsewhere.
        trace.append(
            (
                f"step {number}",
                lane_states(contract, body.observation, lanes),
                np.array(body.rewards, dtype=np.float64).tobytes(),
                bytes(body.terminated_mask),
                bytes(body.truncated_mask),
            )
        )
    return trace


async def seeding_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with opened(ctx, "Join: seeding") as (target, t, contract):
        lanes = contract.num_envs
        actions = [codec.sample(contract.act, rng_for(ctx, 10 + k), lanes) for k in range(REPLAY_STEPS)]
        async with seeded_session(ctx, target, contract, t) as seeded:
            seeds = seeded.seeds
            # The same seed list, twice, then the same actions: identical on every lane.
            one = await rollout(seeded, contract, seeds, actions)
            two = await rollout(seeded, contract, seeds, actions)
            record(report, judging_lanes.seeded_replay(one, two, lanes, seeds), t)

            # gymnasium's chain: seeded reset, then unseeded reset, repeats.
            chains = []
            for _ in range(2):
                await reset(seeded, contract, seeds)
                unseeded = await reset(seeded, contract, [])
                chains.append(lane_states(contract, unseeded.reset.observation, lanes))
            record(report, judging_lanes.seed_chain(chains), t)

            other_seeds = seeds_for(ctx, lanes, 1000)
            other = await reset(seeded, contract, other_seeds)
            other_states = lane_states(contract, other.reset.observation, lanes)
            record(report, judging_lanes.seed_matters(one[0][1], other_states, other_seeds), t)

            if lanes > 1:
                await seed_broadcast(ctx, target, seeded, contract)
            else:
                record(report, judging_lanes.one_lane_seed(), t)
            await seed_length(ctx, target, seeded, contract)


async def seed_broadcast(ctx: Ctx, target: Endpoint, seeded: Seeded, contract: Contract) -> None:
    """One seed for N lanes, twice: every lane must repeat (or the request must be refused)."""
    report, lanes, seed, t = ctx.report, contract.num_envs, ctx.options.seed, seeded.transcript
    observed = []
    for _ in range(2):
        response = await seeded.session.request(reset_request([seed], ctx.state.episode_ids(lanes)))
        if kind_of(response) == "error":
            record(report, judging_lanes.single_seed_refused(response), t)
            await reopen(ctx, target, seeded, contract)
            return
        observed.append(seeded.expect(response, "reset", "reset with one seed").reset.observation)
    record(report, judging_lanes.seed_all_lanes(contract.obs, observed, lanes, seed), t)


async def seed_length(ctx: Ctx, target: Endpoint, seeded: Seeded, contract: Contract) -> None:
    lanes, t = contract.num_envs, seeded.transcript
    seeds = seeds_for(ctx, lanes + 1)
    response = await seeded.session.request(reset_request(seeds, []))
    refused(ctx.report, response, "rlmesh.s5.seed-length", INVALID_ACTION, f"{lanes + 1} seeds for {lanes} lane(s)", t)
    if kind_of(response) == "error" and not response.error.is_recoverable:
        await reopen(ctx, target, seeded, contract)


async def reopen(ctx: Ctx, target: Endpoint, seeded: Seeded, contract: Contract) -> None:
    """A fresh session after one that may have ended (a non-recoverable error ends the stream)."""
    t = seeded.transcript
    finish_session(ctx.report, seeded.session, t)
    await seeded.session.close()
    seeded.session, response = await target.join(t, reset_request(seeds_for(ctx, contract.num_envs), []))
    seeded.expect(response, "reset", "the reset opening a new session")
