"""Phase `render-close`: render by lane, Close, a new session afterwards, the contract unchanged."""

from __future__ import annotations

import grpc

from checks.core import NoReply, PhaseStopped, Transcript
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinEnded, JoinSession, summarize_episode
from checks.rlmesh.common import (
    Contract,
    contract_unchanged,
    describe,
    finish_session,
    kind_of,
    render_request,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.options import Ctx
from checks.rlmesh.probes import INVALID_ACTION, UNSUPPORTED, ensure_session, fatal_ends, refused
from checks.rlmesh.proto import env_pb2
from checks.rlmesh.session import Seeded, join_seeded, kept, opened

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_FORMATS = (env_pb2.RENDER_FORMAT_UNSPECIFIED, env_pb2.RENDER_FORMAT_PNG)  # UNSPECIFIED reads as PNG


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
    report = ctx.report
    response = await session.request(render_request([0]))
    where = f"render of lane 0 (render_mode {contract.render_mode!r})"
    if await fatal_ends(report, session, response, t):
        report.failed(
            "rlmesh.r1.render",
            expected="a render response; the session goes on",
            actual=f"{where}: {describe(response)}, and the session ended",
            evidence=t,
        )
        return
    body = response.render
    if kind_of(response) == "error":
        ok = not contract.render_mode
        report.check(
            ok,
            "rlmesh.r1.render",
            expected="a frame" if contract.render_mode else "no frame or a recoverable error",
            actual=f"{where}: {describe(response)}",
            evidence=t,
        )
        return
    if kind_of(response) != "render":
        report.failed(
            "rlmesh.r1.render", expected="a render response", actual=f"{where}: {describe(response)}", evidence=t
        )
        return
    if not contract.render_mode:
        report.check(
            not body.HasField("frame"),
            "rlmesh.r1.render",
            expected="no frame",
            actual=f"{where}: " + (f"a {len(body.frame)}-byte frame" if body.HasField("frame") else "no frame"),
            evidence=t,
        )
        return
    if not body.HasField("frame"):
        report.failed("rlmesh.r1.render", expected="a frame", actual=f"{where}: no frame", evidence=t)
    elif body.format in PNG_FORMATS:
        report.check(
            body.frame.startswith(PNG_MAGIC),
            "rlmesh.r1.render",
            expected="a PNG frame (PNG format)",
            actual=f"{where}: {len(body.frame)} bytes starting {body.frame[:8]!r}",
            evidence=t,
        )
    else:
        report.passed("rlmesh.r1.render", actual=f"{where}: unknown format {body.format} skipped", evidence=t)


async def close(ctx: Ctx, seeded: Seeded, contract: Contract) -> None:
    """Fresh episodes on every lane, one step, then Close: every episode still active comes back truncated.

    A lane whose episode ended on that step has none active (under NEXT_STEP the next one starts only on
    the following step); its episode was reported in the step's `completed_episodes`, so Close omits it.
    """
    report, lanes, session, t = ctx.report, contract.num_envs, seeded.session, seeded.transcript
    ids = ctx.state.episode_ids(lanes)
    await session.request(reset_request(seeds_for(ctx, lanes, 500), ids))
    step = await session.request(step_request(codec.sample(contract.act, rng_for(ctx, 40), lanes), ids=ids))
    ended = ended_lanes(step, lanes)
    response = await session.request(env_pb2.JoinRequest(close=env_pb2.CloseEnvsRequest(reason="rlconform close")))
    if kind_of(response) != "close":
        report.failed("rlmesh.c1.close", expected="a close response", actual=f"Close: {describe(response)}", evidence=t)
        return
    finals = list(response.close.final_episodes)
    got = sorted((e.env_index, e.episode_id) for e in finals)
    active = [(lane, ids[lane]) for lane in range(lanes) if lane not in ended]
    all_truncated = all(e.truncated for e in finals)
    try:
        end_status = await session.wait_end()
        end = f"the stream ended with gRPC {end_status.status.name}"
        clean = end_status.status is grpc.StatusCode.OK
    except NoReply:
        end, clean = "the stream stayed open after the close response", False
        session.cancel()
    shown = [lane for lane, _ in active][:8]
    gone = f" (lanes {sorted(ended)[:8]} ended on the step before Close)" if ended else ""
    report.check(
        got == active and all_truncated and clean,
        "rlmesh.c1.close",
        expected=f"final_episodes for the active lanes {shown}{gone}, with their ids, all truncated; then status OK",
        actual=f"final_episodes {[summarize_episode(e) for e in finals[:6]]}; {end}",
        evidence=t,
    )


def ended_lanes(response: env_pb2.JoinResponse, lanes: int) -> set[int]:
    """The lanes a full-width step response marks terminated or truncated (none if it is no such response)."""
    if kind_of(response) != "step":
        return set()
    masks = response.step.terminated_mask, response.step.truncated_mask
    if any(len(mask) != lanes for mask in masks):
        return set()
    return {lane for lane in range(lanes) if any(mask[lane] for mask in masks)}


async def reopen(ctx: Ctx, target: Endpoint, contract: Contract, seeds: list[int]) -> None:
    report, lanes = ctx.report, contract.num_envs
    t = report.transcript("Join: a new session after Close")
    try:
        session, response = await target.join(t, reset_request(seeds, ctx.state.episode_ids(lanes)))
    except JoinEnded as exc:
        report.failed("rlmesh.c1.reopen", expected="a new session", actual=str(exc), evidence=t)
        return
    report.check(
        kind_of(response) in ("reset", "error"),
        "rlmesh.c1.reopen",
        expected="an answer to the first request",
        actual=f"the new session's seeded reset: {describe(response)}",
        evidence=t,
    )
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
