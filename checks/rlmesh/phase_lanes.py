"""Phase `lanes`: capability honesty, subset steps, partial reset, lane overlap, per-lane order."""

from __future__ import annotations

import statistics
import time

from checks.core import PhaseStopped
from checks.decision import Decision, record
from checks.rlmesh import codec, judging_lanes
from checks.rlmesh.common import Contract, lanes_to_exercise, observe, reset_request, rng_for, step_request
from checks.rlmesh.judging import kind_of
from checks.rlmesh.options import Ctx
from checks.rlmesh.session import Seeded, opened, seeded_session, stopped

TIMING_ROUNDS = 5
# A serializing server can never beat the sum, however often it is timed, so when noise hides
# the overlap a few more rounds are taken (the best pair counts) before the clause fails.
EXTRA_TIMING_ROUNDS = 10
PIPELINE_DEPTH = 4
# A server that reorders pipelined steps may do so only sometimes (rlmesh 0.1.0: about one try in ten
# or four): pipelined tries repeat until one differs, up to this many or this long after the first.
FIFO_TRIES = 50
FIFO_TRY_SECONDS = 3.0


async def lanes_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with opened(ctx, "Join: lanes") as (target, t, contract):
        chosen = lanes_to_exercise(ctx, contract)
        async with seeded_session(ctx, target, contract, t) as seeded:
            lane, where = chosen[0], f"subset step on lane {chosen[0]}"
            response = await seeded.session.request(
                step_request(codec.sample(contract.act, rng_for(ctx, 20), 1), [lane])
            )
            if not contract.subset_step:
                record(report, judging_lanes.without_subset_step(response, lane), t)
            else:
                if (judged := judging_lanes.with_subset_step(response, lane)).stop is not None:
                    raise stopped(report, judged, t)
                record(report, judged.decisions, t)
                if observe(report, contract, response.step.observation, 1, where, t) is None:
                    raise PhaseStopped("the observation does not decode (see rlmesh.v2.obs-layout)", t)
                await partial_reset(ctx, seeded, contract, chosen[-1])
                if len(chosen) >= 2:
                    await subset_step(ctx, seeded, contract, chosen)
                    await overlap(ctx, seeded, contract, chosen)
                else:
                    record(report, judging_lanes.one_lane_subset(), t)
            await lane_order(ctx, seeded, contract, chosen[0])


async def partial_reset(ctx: Ctx, seeded: Seeded, contract: Contract, lane: int) -> None:
    lanes, seeds, t = contract.num_envs, seeded.seeds, seeded.transcript
    full = await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded full reset")
    response = await seeded.session.request(reset_request([seeds[lane]], ctx.state.episode_ids(1), [lane]))
    where = f"partial reset of lane {lane} with seed {seeds[lane]}"
    if kind_of(response) == "reset" and observe(ctx.report, contract, response.reset.observation, 1, where, t) is None:
        raise PhaseStopped(f"{where}: the observation does not decode (see rlmesh.v2.obs-layout)", t)
    decision = judging_lanes.partial_reset(contract.obs, full.reset.observation, lanes, lane, response, where)
    record(ctx.report, decision, t)


async def subset_step(ctx: Ctx, seeded: Seeded, contract: Contract, chosen: list[int]) -> None:
    report, lanes, seeds, t = ctx.report, contract.num_envs, seeded.seeds, seeded.transcript
    a, b = chosen[0], chosen[1]
    rng = rng_for(ctx, 21)
    response = await seeded.session.request(step_request(codec.sample(contract.act, rng, 2), [a, b]))
    aligned = record(report, judging_lanes.subset_fields(response, a, b), t)
    if not aligned or observe(report, contract, response.step.observation, 2, f"subset step on [{a}, {b}]", t) is None:
        return
    # Lane b after "step a, then step b" must equal lane b after "step b" alone.
    act_a, act_b = codec.sample(contract.act, rng, 1), codec.sample(contract.act, rng, 1)
    alone = []
    for _ in range(2):
        await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded reset")
        step = await seeded.exchange(step_request(act_b, [b]), "step", f"subset step on [{b}]")
        alone.append(codec.lane_bytes(contract.obs, step.step.observation, 1, 0))
    if (unjudged := judging_lanes.lane_not_replayable(alone, b)) is not None:
        record(report, unjudged, t)
        return
    await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded reset")
    await seeded.exchange(step_request(act_a, [a]), "step", f"subset step on [{a}]")
    after = await seeded.exchange(step_request(act_b, [b]), "step", f"subset step on [{b}]")
    got = codec.lane_bytes(contract.obs, after.step.observation, 1, 0)
    if not record(report, judging_lanes.untouched(alone[0], got, a, b), t):
        return
    # The lanes named in descending order: each action and each result row belongs to the lane at its position.
    pair = codec.sample(contract.act, rng, 2)
    await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded reset")
    both = await seeded.exchange(step_request(pair, [b, a]), "step", f"subset step on [{b}, {a}]")
    await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded reset")
    solo = {}
    for lane, position in ((a, 1), (b, 0)):
        action = codec.select_lanes(contract.act, pair, 2, [position])
        step = await seeded.exchange(step_request(action, [lane]), "step", f"subset step on [{lane}]")
        solo[lane] = codec.lane_bytes(contract.obs, step.step.observation, 1, 0)
    rows = [codec.lane_bytes(contract.obs, both.step.observation, 2, row) for row in (0, 1)]
    record(report, judging_lanes.rows_follow_lanes(rows, solo, list(both.step.env_indices), a, b), t)


async def overlap(ctx: Ctx, seeded: Seeded, contract: Contract, chosen: list[int]) -> None:
    """Time each lane alone, then both in flight at once; overlap means the pair costs about the longer one."""
    a, b, session, t = chosen[0], chosen[1], seeded.session, seeded.transcript
    rng = rng_for(ctx, 22)
    alone: dict[int, list[float]] = {a: [], b: []}
    pairs: list[float] = []

    async def timing_round() -> None:
        for lane in (a, b):
            started = time.monotonic()
            await seeded.exchange(step_request(codec.sample(contract.act, rng, 1), [lane]), "step", f"step lane {lane}")
            alone[lane].append(time.monotonic() - started)
        started = time.monotonic()
        first = await session.send(step_request(codec.sample(contract.act, rng, 1), [a]))
        second = await session.send(step_request(codec.sample(contract.act, rng, 1), [b]))
        for request_id in (first, second):
            seeded.expect(await session.response(request_id), "step", "concurrent lane step")
        pairs.append(time.monotonic() - started)

    def judged() -> Decision:
        typical_a, typical_b = statistics.median(alone[a]), statistics.median(alone[b])
        return judging_lanes.lanes_overlap(typical_a, typical_b, min(pairs), len(pairs), a, b)

    for _ in range(TIMING_ROUNDS):
        await timing_round()
    # The best pair round counts, and a serializing server can never beat the sum: only a miss is worth more rounds.
    for _ in range(EXTRA_TIMING_ROUNDS):
        if not judged().missed:
            break
        await timing_round()
    record(ctx.report, judged(), t)


async def lane_order(ctx: Ctx, seeded: Seeded, contract: Contract, lane: int) -> None:
    """Pipelined steps for one lane against a sequential replay of the same actions."""
    report, lanes, seeds, session, t = ctx.report, contract.num_envs, seeded.seeds, seeded.session, seeded.transcript
    width = 1 if contract.subset_step else lanes
    indices = [lane] if contract.subset_step else []
    rng = rng_for(ctx, 23)
    actions = [codec.sample(contract.act, rng, width) for _ in range(PIPELINE_DEPTH)]

    async def states(pipelined: bool) -> list[bytes]:
        await seeded.exchange(reset_request(seeds, ctx.state.episode_ids(lanes)), "reset", "seeded reset")
        if pipelined:
            ids = [await session.send(step_request(action, indices)) for action in actions]
            responses = [await session.response(request_id) for request_id in ids]
        else:
            responses = [await session.request(step_request(action, indices)) for action in actions]
        for response in responses:
            seeded.expect(response, "step", f"step of lane {lane}")
        return [codec.lane_bytes(contract.obs, r.step.observation, width, 0) for r in responses]

    reference = await states(False)
    if (unjudged := judging_lanes.order_not_replayable(reference, await states(False))) is not None:
        record(report, unjudged, t)
        return
    wrong: list[int] = []
    tries, until = 0, time.monotonic() + FIFO_TRY_SECONDS
    while not wrong and tries < FIFO_TRIES and (tries == 0 or time.monotonic() < until):
        tries += 1
        wrong = judging_lanes.out_of_order(reference, await states(True))
    record(report, judging_lanes.lane_fifo(wrong, tries, PIPELINE_DEPTH), t)
