"""Phase `seeding`: seeded replay, seeds reaching every lane, seed chain, seed-list length."""

from __future__ import annotations

import numpy as np

from checks.core import PhaseContext, Transcript
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinSession, NoReply, StreamEnded, error_text
from checks.rlmesh.common import (
    Contract,
    Unanswered,
    describe,
    endpoint,
    episode_ids,
    expect,
    fetch_contract,
    finish_session,
    kind_of,
    not_judged,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.proto import env_pb2

REPLAY_STEPS = 3
SEEDING_CLAUSES = (
    "rlmesh.s4.seeded-replay",
    "rlmesh.s4.seed-chain",
    "rlmesh.s4.seed-matters",
    "rlmesh.s4.seed-all-lanes",
    "rlmesh.s5.seed-length",
)
INVALID_ACTION = env_pb2.ENV_ERROR_CODE_INVALID_ACTION


def lane_states(contract: Contract, value, lanes: int) -> list[bytes]:
    return [codec.lane_bytes(contract.obs, value, lanes, lane) for lane in range(lanes)]


async def reset(session: JoinSession, contract: Contract, seeds: list[int]) -> env_pb2.JoinResponse:
    lanes = contract.num_envs
    response = await session.request(reset_request(seeds, episode_ids(lanes)))
    return expect(response, "reset", f"reset with seeds {seeds[:8]}")


async def rollout(session: JoinSession, contract: Contract, seeds: list[int], actions: list) -> list[tuple]:
    """A seeded reset and a fixed action sequence, as comparable per-step records."""
    lanes = contract.num_envs
    first = await reset(session, contract, seeds)
    trace = [("reset", lane_states(contract, first.reset.observation, lanes))]
    for number, action in enumerate(actions, 1):
        response = expect(await session.request(step_request(action, ids=[])), "step", f"replay step {number}")
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


def first_difference(one: list[tuple], two: list[tuple], lanes: int) -> str | None:
    for a, b in zip(one, two):
        for lane in range(lanes):
            if a[1][lane] != b[1][lane]:
                return f"{a[0]}: lane {lane} observation differs"
        if a[2:] != b[2:]:
            return f"{a[0]}: rewards or masks differ ({a[2:]} vs {b[2:]})"
    return None


async def seeding_phase(ctx: PhaseContext) -> None:
    report = ctx.report
    async with endpoint(ctx) as target:
        t = report.transcript("Join: seeding")
        contract = await fetch_contract(target, t)
        lanes = contract.num_envs
        seeds = seeds_for(ctx, lanes)
        actions = [codec.sample(contract.act, rng_for(ctx, 10 + k), lanes) for k in range(REPLAY_STEPS)]
        session, first = await target.join(t, reset_request(seeds, episode_ids(lanes)))
        try:
            expect(first, "reset", "seeded reset")
            # The same seed list, twice, then the same actions: identical on every lane.
            one = await rollout(session, contract, seeds, actions)
            two = await rollout(session, contract, seeds, actions)
            difference = first_difference(one, two, lanes)
            report.check(
                difference is None,
                "rlmesh.s4.seeded-replay",
                f"identical observations, rewards and masks on all {lanes} lane(s) for seeds {seeds[:8]}",
                difference or f"identical over a reset and {REPLAY_STEPS} steps",
                t,
            )

            # gymnasium's chain: seeded reset, then unseeded reset, repeats.
            chains = []
            for _ in range(2):
                await reset(session, contract, seeds)
                unseeded = await reset(session, contract, [])
                chains.append(lane_states(contract, unseeded.reset.observation, lanes))
            report.check(
                chains[0] == chains[1],
                "rlmesh.s4.seed-chain",
                "reset(seeds) then reset() gives the same observation twice",
                "identical" if chains[0] == chains[1] else "the unseeded reset after a seeded one differed",
                t,
            )

            other = await reset(session, contract, seeds_for(ctx, lanes, 1000))
            moved = lane_states(contract, other.reset.observation, lanes) != one[0][1]
            report.check(
                moved,
                "rlmesh.s4.seed-matters",
                "another seed list changes some lane's first observation",
                "changed" if moved else f"seeds {seeds_for(ctx, lanes, 1000)[:8]} gave the same observations",
                t,
            )

            if lanes > 1:
                session = await seed_broadcast(ctx, target, session, contract, t)
            else:
                report.unsupported("rlmesh.s4.seed-all-lanes", "one lane: a single seed is the whole seed list", t)
            session = await seed_length(ctx, target, session, contract, t)
        except (Unanswered, codec.ValueMismatch, StreamEnded, NoReply) as exc:
            not_judged(report, SEEDING_CLAUSES, exc, t)
        finally:
            finish_session(report, session, t)
            await session.close()


async def seed_broadcast(
    ctx: PhaseContext, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    """One seed for N lanes, twice: every lane must repeat (or the request must be refused)."""
    report, lanes, seed = ctx.report, contract.num_envs, ctx.options.seed
    responses = []
    for _ in range(2):
        response = await session.request(reset_request([seed], episode_ids(lanes)))
        if kind_of(response) == "error":
            report.passed(
                "rlmesh.s4.seed-all-lanes",
                actual=f"a single seed was refused: {error_text(response.error)}",
                evidence=t,
            )
            return await reopen(ctx, target, session, contract, t)
        responses.append(expect(response, "reset", "reset with one seed").reset.observation)
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
        f"reset(seeds=[{seed}]) twice gives identical observations on all {lanes} lanes",
        (f"lanes {unseeded} were left unseeded by reset(seeds=[{seed}]): " if unseeded else "") + "; ".join(lines),
        t,
    )
    return session


async def seed_length(
    ctx: PhaseContext, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    lanes = contract.num_envs
    seeds = seeds_for(ctx, lanes + 1)
    response = await session.request(reset_request(seeds, []))
    ok = kind_of(response) == "error" and response.error.code == INVALID_ACTION and response.error.is_recoverable
    ctx.report.check(
        ok,
        "rlmesh.s5.seed-length",
        "a recoverable INVALID_ACTION",
        f"{lanes + 1} seeds for {lanes} lane(s): {describe(response)}",
        t,
    )
    if kind_of(response) == "error" and not response.error.is_recoverable:
        return await reopen(ctx, target, session, contract, t)
    return session


async def reopen(
    ctx: PhaseContext, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    """A fresh session after one that may have ended (a non-recoverable error ends the stream)."""
    finish_session(ctx.report, session, t)
    await session.close()
    fresh, response = await target.join(t, reset_request(seeds_for(ctx, contract.num_envs), []))
    expect(response, "reset", "the reset opening a new session")
    return fresh
