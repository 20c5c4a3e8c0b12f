"""Phase `seeding`: seeded replay, seeds reaching every lane, seed chain, seed-list length."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, error_text
from checks.rlmesh.common import (
    Contract,
    finish_session,
    kind_of,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import INVALID_ACTION, refused
from checks.rlmesh.proto import env_pb2, spaces_pb2
from checks.rlmesh.session import Seeded, opened, seeded_session

REPLAY_STEPS = 3
Record = tuple[Any, ...]  # (label, per-lane observation bytes, then rewards and masks as bytes)


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


def first_difference(one: list[Record], two: list[Record], lanes: int) -> str | None:
    for a, b in zip(one, two, strict=False):
        for lane in range(lanes):
            if a[1][lane] != b[1][lane]:
                return f"{a[0]}: lane {lane} observation differs"
        if a[2:] != b[2:]:
            return f"{a[0]}: rewards or masks differ ({a[2:]} vs {b[2:]})"
    return None


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
            difference = first_difference(one, two, lanes)
            report.check(
                difference is None,
                "rlmesh.s4.seeded-replay",
                expected=f"identical observations, rewards and masks on all {lanes} lane(s) for seeds {seeds[:8]}",
                actual=difference or f"identical over a reset and {REPLAY_STEPS} steps",
                evidence=t,
            )

            # gymnasium's chain: seeded reset, then unseeded reset, repeats.
            chains = []
            for _ in range(2):
                await reset(seeded, contract, seeds)
                unseeded = await reset(seeded, contract, [])
                chains.append(lane_states(contract, unseeded.reset.observation, lanes))
            report.check(
                chains[0] == chains[1],
                "rlmesh.s4.seed-chain",
                expected="reset(seeds) then reset() gives the same observation twice",
                actual="identical" if chains[0] == chains[1] else "the unseeded reset after a seeded one differed",
                evidence=t,
            )

            other = await reset(seeded, contract, seeds_for(ctx, lanes, 1000))
            moved = lane_states(contract, other.reset.observation, lanes) != one[0][1]
            report.check(
                moved,
                "rlmesh.s4.seed-matters",
                expected="another seed list changes some lane's first observation",
                actual="changed" if moved else f"seeds {seeds_for(ctx, lanes, 1000)[:8]} gave the same observations",
                evidence=t,
            )

            if lanes > 1:
                await seed_broadcast(ctx, target, seeded, contract)
            else:
                report.unsupported("rlmesh.s4.seed-all-lanes", "one lane: a single seed is the whole seed list", t)
            await seed_length(ctx, target, seeded, contract)


async def seed_broadcast(ctx: Ctx, target: Endpoint, seeded: Seeded, contract: Contract) -> None:
    """One seed for N lanes, twice: every lane must repeat (or the request must be refused)."""
    report, lanes, seed, t = ctx.report, contract.num_envs, ctx.options.seed, seeded.transcript
    responses = []
    for _ in range(2):
        response = await seeded.session.request(reset_request([seed], ctx.state.episode_ids(lanes)))
        if kind_of(response) == "error":
            report.passed(
                "rlmesh.s4.seed-all-lanes",
                actual=f"a single seed was refused: {error_text(response.error)}",
                evidence=t,
            )
            await reopen(ctx, target, seeded, contract)
            return
        responses.append(seeded.expect(response, "reset", "reset with one seed").reset.observation)
    states = [lane_states(contract, value, lanes) for value in responses]
    lines, unseeded = [], []
    for lane in range(lanes):
        same = states[0][lane] == states[1][lane]
        if not same:
            unseeded.append(lane)
        lines.append(
            f"lane {lane}: "
            + (
                "identical"
                if same
                else (
                    f"differs - first {codec.lane_summary(contract.obs, responses[0], lanes, lane)}, "
                    f"second {codec.lane_summary(contract.obs, responses[1], lanes, lane)}"
                )
            )
        )
    report.check(
        not unseeded,
        "rlmesh.s4.seed-all-lanes",
        expected=f"reset(seeds=[{seed}]) twice gives identical observations on all {lanes} lanes",
        actual=(f"lanes {unseeded} were left unseeded by reset(seeds=[{seed}]): " if unseeded else "")
        + "; ".join(lines),
        evidence=t,
    )


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
