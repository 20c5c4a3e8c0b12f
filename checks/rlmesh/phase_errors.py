"""Phase `errors`: malformed requests get the protocol's recoverable errors and the session goes on."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from checks.core import Evidence, NoReply, Report, Transcript
from checks.decision import record
from checks.rlmesh import codec, judging_errors
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, RpcFailed, StrayResponse
from checks.rlmesh.common import Contract, finish_session, reset_request, rng_for, seeds_for, step_request
from checks.rlmesh.judging import kind_of
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import INVALID_ACTION, UNSUPPORTED, ensure_session, fatal_ends, refused
from checks.rlmesh.proto import env_pb2, spaces_pb2
from checks.rlmesh.session import opened

TIMED_STEPS = 3


def malformed_actions(contract: Contract, rng: np.random.Generator) -> list[tuple[str, env_pb2.JoinRequest]]:
    lanes, space = contract.num_envs, contract.act
    extra = codec.sample(space, rng, lanes)
    if not extra.leaves:  # a space without leaves: an empty action is the valid one, so only a surplus leaf is wrong
        return [("an extra leaf", step_request(spaces_pb2.SpaceValue(leaves=[b"\x00" * 8])))]
    extra.leaves.append(extra.leaves[0])
    probes = [
        ("an extra leaf", step_request(extra)),
        ("no leaves", step_request(spaces_pb2.SpaceValue())),
        ("no action at all", step_request(None)),
        (f"a batch of {lanes + 1} for {lanes} lane(s)", step_request(codec.sample(space, rng, lanes + 1))),
    ]
    wrong = codec.wrong_dtype(space, lanes)
    if wrong is not None:
        probes.insert(0, ("the first leaf at another dtype width", step_request(wrong)))
    outside = codec.out_of_domain(space, lanes)
    if outside is not None:
        probes.insert(0, ("a value outside the action space (or NaN)", step_request(outside)))
    return probes


async def still_answers(
    report: Report,
    session: JoinSession,
    valid: spaces_pb2.SpaceValue,
    clause_id: str,
    expected: str,
    where: str,
    evidence: Evidence,
) -> env_pb2.JoinResponse:
    """A valid step after a probe: the stream must still answer it with a step (`clause_id` decides)."""
    after = await session.request(step_request(valid))
    record(report, judging_errors.still_answers(after, clause_id, expected, where), evidence)
    return after


@dataclass
class Probed:
    """The malformed-request session, replaced by a fresh one whenever a probe ends it."""

    session: JoinSession


async def errors_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with opened(ctx, "Join: step before reset") as (target, t, contract):
        await step_before_reset(ctx, target, contract, t)

        t = report.transcript("Join: malformed requests")
        seeds, lanes = seeds_for(ctx, contract.num_envs), contract.num_envs
        valid = codec.sample(contract.act, rng_for(ctx, 30), lanes)
        session, _ = await target.join(t, reset_request(seeds, ctx.state.episode_ids(lanes)))
        probed = Probed(session)
        try:
            await bad_actions(ctx, target, probed, contract, valid, t)
            probed.session = await bad_indices(ctx, target, probed.session, contract, t)
            await empty_request(ctx, target, probed, contract, valid, t)
            probed.session = await ensure_session(ctx, target, probed.session, contract, t)
            await step_timeout(ctx, probed.session, contract, valid, t)
            probed.session = await ensure_session(ctx, target, probed.session, contract, t)
            await second_join(ctx, target, probed.session, valid, t)
        except (JoinEnded, NoReply) as exc:
            record(report, judging_errors.session_broke_off(exc), t)
        finally:
            finish_session(report, probed.session, t)
            await probed.session.close()
        await survives(ctx, target, seeds, lanes)


async def bad_actions(
    ctx: Ctx, target: Endpoint, probed: Probed, contract: Contract, valid: spaces_pb2.SpaceValue, t: Transcript
) -> None:
    """Each malformed action is refused recoverably, the session stays usable and (if seeded replay is exact) the
    env state does not move."""
    report, lanes = ctx.report, contract.num_envs
    seeds = seeds_for(ctx, lanes)
    reference = []
    for _ in range(2):
        await probed.session.request(reset_request(seeds, ctx.state.episode_ids(lanes)))
        reference.append(await probed.session.request(step_request(valid)))
    replayed = judging_errors.replayed_step(reference)
    for label, request in malformed_actions(contract, rng_for(ctx, 34)):
        probed.session = session = await ensure_session(ctx, target, probed.session, contract, t)
        await session.request(reset_request(seeds, ctx.state.episode_ids(lanes)))
        response = await session.request(request)
        refused(report, response, "rlmesh.v3.bad-action-rejected", INVALID_ACTION, label, t)
        if await fatal_ends(report, session, response, t):
            continue
        after = await still_answers(
            report, session, valid, "rlmesh.e2.session-usable", "a step response", f"valid step after {label}", t
        )
        if (unchanged := judging_errors.state_unchanged(replayed, response, after, label)) is not None:
            record(report, unchanged, t)
    record(report, judging_errors.state_not_replayable(replayed), t)


async def empty_request(
    ctx: Ctx, target: Endpoint, probed: Probed, contract: Contract, valid: spaces_pb2.SpaceValue, t: Transcript
) -> None:
    report = ctx.report
    probed.session = session = await ensure_session(ctx, target, probed.session, contract, t)
    response = await session.request(env_pb2.JoinRequest())
    refused(report, response, "rlmesh.e2.empty-request", UNSUPPORTED, "empty JoinRequest", t)
    if not await fatal_ends(report, session, response, t):
        await still_answers(
            report,
            session,
            valid,
            "rlmesh.e2.empty-request",
            "the stream still answers a step",
            "step after the empty request",
            t,
        )


async def survives(ctx: Ctx, target: Endpoint, seeds: list[int], lanes: int) -> None:
    """After every probe, the endpoint still handshakes and answers a new Join."""
    report = ctx.report
    t = report.transcript("Handshake and Join after the probes")
    try:
        await target.handshake(t)
        fresh, response = await target.join(t, reset_request(seeds, ctx.state.episode_ids(lanes)))
    except (RpcFailed, JoinEnded, NoReply) as exc:
        record(report, judging_errors.survives(exc), t)
        return
    record(report, judging_errors.survives(response), t)
    await fresh.close()


async def step_before_reset(ctx: Ctx, target: Endpoint, contract: Contract, t: Transcript) -> None:
    report = ctx.report
    action = codec.sample(contract.act, rng_for(ctx, 31), contract.num_envs)
    session, response = await target.join(t, step_request(action))
    record(report, judging_errors.step_before_reset(response), t)
    await fatal_ends(report, session, response, t)
    finish_session(report, session, t)
    await session.close()


async def bad_indices(
    ctx: Ctx, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    report, lanes = ctx.report, contract.num_envs
    codes = (INVALID_ACTION,) if contract.subset_step else (INVALID_ACTION, UNSUPPORTED)
    one = codec.sample(contract.act, rng_for(ctx, 32), 1)
    two = codec.sample(contract.act, rng_for(ctx, 33), 2)
    probes = [
        (f"step of lane {lanes} (out of range)", step_request(one, [lanes])),
        ("step of lanes [0, 0] (duplicate)", step_request(two, [0, 0])),
        (f"partial reset of lane {lanes} (out of range)", reset_request([], [], [lanes])),
    ]
    for label, request in probes:
        session = await ensure_session(ctx, target, session, contract, t)
        response = await session.request(request)
        record(report, judging_errors.bad_index(response, codes, label), t)
        await fatal_ends(report, session, response, t)
    return session


async def step_timeout(
    ctx: Ctx, session: JoinSession, contract: Contract, valid: spaces_pb2.SpaceValue, t: Transcript
) -> None:
    """A step whose `timeout_ms` is a quarter of the measured step time must come back as a recoverable TIMEOUT."""
    report = ctx.report
    await session.request(reset_request(seeds_for(ctx, contract.num_envs), ctx.state.episode_ids(contract.num_envs)))
    times = []
    for _ in range(TIMED_STEPS):
        started = time.monotonic()
        response = await session.request(step_request(valid))
        if kind_of(response) != "step":
            record(report, judging_errors.timeout_unjudged(response), t)
            await fatal_ends(report, session, response, t)
            return
        times.append(time.monotonic() - started)
    step_time = min(times)
    if (unjudged := judging_errors.too_fast_for_timeout(step_time)) is not None:
        record(report, unjudged, t)
        return
    deadline_ms = max(1, int(step_time * 1000 / 4))
    started = time.monotonic()
    response = await session.request(
        env_pb2.JoinRequest(step=env_pb2.StepRequest(action=valid, timeout_ms=deadline_ms))
    )
    took = time.monotonic() - started
    ok = record(report, judging_errors.timeout_answer(response, took, deadline_ms, step_time), t)
    if await fatal_ends(report, session, response, t) or not ok:
        return
    try:
        await still_answers(
            report, session, valid, "rlmesh.e3.timeout", "the stream still answers a step", "step after the TIMEOUT", t
        )
    except StrayResponse as exc:  # most likely the timed-out step answered after all: one request, two answers
        record(report, judging_errors.answered_twice(exc), t)


async def second_join(
    ctx: Ctx, target: Endpoint, session: JoinSession, valid: spaces_pb2.SpaceValue, t: Transcript
) -> None:
    report = ctx.report
    t2 = report.transcript("Join: a second, concurrent session")
    try:
        other, response = await target.join(t2, reset_request(seeds_for(ctx, 1), []), slot_wait=0)
    except JoinEnded as ended:
        record(report, judging_errors.second_join(ended), [t, t2])
    else:
        record(report, judging_errors.second_join(response), [t, t2])
        other.cancel()
    await still_answers(
        report,
        session,
        valid,
        "rlmesh.e4.single-session",
        "the first session still answers",
        "first session's step after the second Join",
        [t, t2],
    )
