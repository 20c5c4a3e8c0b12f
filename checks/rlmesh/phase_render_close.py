"""Phase `render-close`: render by lane, Close, a new session afterwards, the contract unchanged."""

from __future__ import annotations

from checks.core import PhaseStopped, Transcript
from checks.decision import record
from checks.rlmesh import codec, judging_errors
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession
from checks.rlmesh.common import (
    Contract,
    contract_unchanged,
    finish_session,
    render_request,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.judging import kind_of
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import INVALID_ACTION, UNSUPPORTED, ensure_session, fatal_ends, refused, stream_end
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.session import Seeded, join_seeded, kept, opened


async def render_close_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with opened(ctx, "Join: render") as (target, t, contract):
        lanes = contract.num_envs
        seeded = await join_seeded(ctx, target, contract, t)
        stopped: PhaseStopped | None = None
        try:
            async with kept(seeded):
                response = await seeded.session.request(render_request([0, 1]))
                refused(report, response, "rlmesh.r1.render-multi-lane", UNSUPPORTED, "render of lanes [0, 1]", t)
                await fatal_ends(report, seeded.session, response, t)
                seeded.session = await ensure_session(ctx, target, seeded.session, contract, t)
                await render_lane_zero(ctx, seeded.session, contract, t)
                seeded.session = await ensure_session(ctx, target, seeded.session, contract, t)
                response = await seeded.session.request(render_request([lanes]))
                where = f"render of lane {lanes} (out of range)"
                refused(report, response, "rlmesh.r1.render-bad-lane", INVALID_ACTION, where, t)
                await fatal_ends(report, seeded.session, response, t)
                seeded.session = await ensure_session(ctx, target, seeded.session, contract, t)
                await close(ctx, seeded, contract)
        except PhaseStopped as stop:  # a new session must be possible whatever became of this one
            stopped = stop
        await reopen(ctx, target, contract, seeded.seeds)
        if stopped is not None:
            raise stopped


async def render_lane_zero(ctx: Ctx, session: JoinSession, contract: Contract, t: Transcript) -> None:
    response = await session.request(render_request([0]))
    where = f"render of lane 0 (render_mode {contract.render_mode!r})"
    ended = await fatal_ends(ctx.report, session, response, t)
    record(ctx.report, judging_errors.render(response, contract.render_mode, ended, where), t)


async def close(ctx: Ctx, seeded: Seeded, contract: Contract) -> None:
    """Fresh episodes on every lane, one step, then Close: every episode still active comes back truncated.

    A lane whose episode ended on that step has none active (under NEXT_STEP the next one starts only on
    the following step); its episode was reported in the step's `completed_episodes`, so Close omits it.
    """
    report, lanes, session, t = ctx.report, contract.num_envs, seeded.session, seeded.transcript
    ids = ctx.state.episode_ids(lanes)
    await session.request(reset_request(seeds_for(ctx, lanes, 500), ids))
    step = await session.request(step_request(codec.sample(contract.act, rng_for(ctx, 40), lanes), ids=ids))
    ended = judging_errors.ended_lanes(step, lanes)
    active = [(lane, ids[lane]) for lane in range(lanes) if lane not in ended]
    response = await session.request(env_pb2.JoinRequest(close=env_pb2.CloseEnvsRequest(reason="rlconform close")))
    end = await stream_end(session) if kind_of(response) == "close" else None
    record(report, judging_errors.close(response, active, ended, end), t)


async def reopen(ctx: Ctx, target: Endpoint, contract: Contract, seeds: list[int]) -> None:
    report, lanes = ctx.report, contract.num_envs
    t = report.transcript("Join: a new session after Close")
    try:
        session, response = await target.join(t, reset_request(seeds, ctx.state.episode_ids(lanes)))
    except JoinEnded as exc:
        record(report, judging_errors.reopen(exc), t)
        return
    record(report, judging_errors.reopen(response), t)
    finish_session(report, session, t)
    await session.close()
    contract_unchanged(
        report,
        contract.response,
        await target.handshake(t),
        "the env_contract of the phase's first Handshake",
        "identical after the sessions",
        "the env_contract changed after the sessions",
        t,
    )
