"""Phases `render_close` (render, close, a new session, contract stability) and the opt-in `shutdown`."""

from __future__ import annotations

import asyncio
import time

import grpc

from checks.core import PhaseContext, Transcript, seconds
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinSession, NoReply, RpcFailed, StreamEnded, summarize_episode
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
from checks.rlmesh.phase_errors import INVALID_ACTION, UNSUPPORTED, ensure_session, fatal_ends, recoverable
from checks.rlmesh.proto import env_pb2

RENDER_CLOSE_CLAUSES = (
    "rlmesh.r1.render-multi-lane",
    "rlmesh.r1.render",
    "rlmesh.r1.render-bad-lane",
    "rlmesh.c1.close",
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
PNG_FORMATS = (env_pb2.RENDER_FORMAT_UNSPECIFIED, env_pb2.RENDER_FORMAT_PNG)  # UNSPECIFIED reads as PNG


async def render_close_phase(ctx: PhaseContext) -> None:
    report = ctx.report
    async with endpoint(ctx) as target:
        t = report.transcript("Join: render")
        contract = await fetch_contract(target, t)
        lanes, seeds = contract.num_envs, seeds_for(ctx, contract.num_envs)
        session, first = await target.join(t, reset_request(seeds, episode_ids(lanes)))
        try:
            expect(first, "reset", "seeded reset")
            response = await session.request(env_pb2.JoinRequest(render=env_pb2.RenderRequest(env_indices=[0, 1])))
            report.check(
                recoverable(response, UNSUPPORTED),
                "rlmesh.r1.render-multi-lane",
                "a recoverable UNSUPPORTED",
                f"render of lanes [0, 1]: {describe(response)}",
                t,
            )
            await fatal_ends(report, session, response, t)
            session = await ensure_session(ctx, target, session, contract, t)
            await render_lane_zero(ctx, session, contract, t)
            session = await ensure_session(ctx, target, session, contract, t)
            response = await session.request(env_pb2.JoinRequest(render=env_pb2.RenderRequest(env_indices=[lanes])))
            report.check(
                recoverable(response, INVALID_ACTION),
                "rlmesh.r1.render-bad-lane",
                "a recoverable INVALID_ACTION",
                f"render of lane {lanes} (out of range): {describe(response)}",
                t,
            )
            await fatal_ends(report, session, response, t)
            session = await ensure_session(ctx, target, session, contract, t)
            await close(ctx, session, contract, t)
        except (Unanswered, StreamEnded, NoReply) as exc:
            not_judged(report, RENDER_CLOSE_CLAUSES, exc, t)
        finally:
            finish_session(report, session, t)
            await session.close()
        await reopen(ctx, target, contract, seeds)


async def render_lane_zero(ctx: PhaseContext, session: JoinSession, contract: Contract, t: Transcript) -> None:
    report = ctx.report
    response = await session.request(env_pb2.JoinRequest(render=env_pb2.RenderRequest(env_indices=[0])))
    where = f"render of lane 0 (render_mode {contract.render_mode!r})"
    if await fatal_ends(report, session, response, t):
        report.failed(
            "rlmesh.r1.render",
            "a render response; the session goes on",
            f"{where}: {describe(response)}, and the session ended",
            t,
        )
        return
    body = response.render
    if kind_of(response) == "error":
        ok = not contract.render_mode
        report.check(
            ok,
            "rlmesh.r1.render",
            "a frame" if contract.render_mode else "no frame or a recoverable error",
            f"{where}: {describe(response)}",
            t,
        )
        return
    if kind_of(response) != "render":
        report.failed("rlmesh.r1.render", "a render response", f"{where}: {describe(response)}", t)
        return
    if not contract.render_mode:
        report.check(
            not body.HasField("frame"),
            "rlmesh.r1.render",
            "no frame",
            f"{where}: " + (f"a {len(body.frame)}-byte frame" if body.HasField("frame") else "no frame"),
            t,
        )
        return
    if not body.HasField("frame"):
        report.failed("rlmesh.r1.render", "a frame", f"{where}: no frame", t)
    elif body.format in PNG_FORMATS:
        report.check(
            body.frame.startswith(PNG_MAGIC),
            "rlmesh.r1.render",
            "a PNG frame (PNG format)",
            f"{where}: {len(body.frame)} bytes starting {body.frame[:8]!r}",
            t,
        )
    else:
        report.passed("rlmesh.r1.render", actual=f"{where}: unknown format {body.format} skipped", evidence=t)


async def close(ctx: PhaseContext, session: JoinSession, contract: Contract, t: Transcript) -> None:
    """Fresh episodes on every lane, one step, then Close: every one of them comes back truncated."""
    report, lanes = ctx.report, contract.num_envs
    ids = episode_ids(lanes)
    await session.request(reset_request(seeds_for(ctx, lanes, 500), ids))
    await session.request(step_request(codec.sample(contract.act, rng_for(ctx, 40), lanes), ids=ids))
    response = await session.request(env_pb2.JoinRequest(close=env_pb2.CloseEnvsRequest(reason="rlconform close")))
    if kind_of(response) != "close":
        report.failed("rlmesh.c1.close", "a close response", f"Close: {describe(response)}", t)
        return
    finals = list(response.close.final_episodes)
    got = sorted((e.env_index, e.episode_id) for e in finals)
    expected = sorted(enumerate(ids))
    all_truncated = all(e.truncated for e in finals)
    try:
        ended = await session.wait_end()
        end = f"the stream ended with gRPC {ended.code.name}"
        clean = ended.code is grpc.StatusCode.OK
    except NoReply:
        end, clean = "the stream stayed open after the close response", False
        session.cancel()
    report.check(
        got == expected and all_truncated and clean,
        "rlmesh.c1.close",
        f"final_episodes for lanes {list(range(lanes))[:8]} with ids {ids[:4]}, all truncated; then status OK",
        f"final_episodes {[summarize_episode(e) for e in finals[:6]]}; {end}",
        t,
    )


async def reopen(ctx: PhaseContext, target: Endpoint, contract: Contract, seeds: list[int]) -> None:
    report, lanes = ctx.report, contract.num_envs
    t = report.transcript("Join: a new session after Close")
    try:
        session, response = await target.join(t, reset_request(seeds, episode_ids(lanes)))
    except StreamEnded as exc:
        report.failed("rlmesh.c1.reopen", "a new session", str(exc), t)
        return
    report.check(
        kind_of(response) in ("reset", "error"),
        "rlmesh.c1.reopen",
        "an answer to the first request",
        f"the new session's seeded reset: {describe(response)}",
        t,
    )
    finish_session(report, session, t)
    await session.close()
    again = await target.handshake(t)
    before = contract.response.env_contract.SerializeToString(deterministic=True)
    same = again.env_contract.SerializeToString(deterministic=True) == before
    report.check(
        same,
        "rlmesh.h3.contract-stable",
        "the env_contract of the phase's first Handshake",
        "identical after the sessions" if same else "the env_contract changed after the sessions",
        t,
    )


async def shutdown_phase(ctx: PhaseContext) -> None:
    """Ask the endpoint to stop. Refusing is fine; accepting means it must actually stop, promptly."""
    report = ctx.report
    async with endpoint(ctx) as target:
        t = report.transcript("Shutdown")
        await target.handshake(t)
        try:
            response = await target.shutdown(t, "rlconform shutdown probe")
        except RpcFailed as exc:
            report.failed("rlmesh.c2.shutdown", "a ShutdownResponse", str(exc), t)
            return
        base = response.base
        if not base.accepted:
            await target.handshake(t, unavailable_is_unreachable=False)
            report.check(
                bool(base.message.strip()),
                "rlmesh.c2.shutdown",
                "refused with a message, still serving",
                f"accepted=false, message {base.message[:120]!r}; a later Handshake was answered",
                t,
            )
            return
        started = time.monotonic()
        while time.monotonic() - started < ctx.timeout:
            try:
                await target.handshake(t, unavailable_is_unreachable=False)
            except RpcFailed as exc:
                gone = exc.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                report.check(
                    gone,
                    "rlmesh.c2.shutdown",
                    f"the endpoint gone within {ctx.timeout:g}s",
                    f"accepted; {seconds(time.monotonic() - started)} later a Handshake got {exc}",
                    t,
                )
                return
            await asyncio.sleep(0.2)
        report.failed(
            "rlmesh.c2.shutdown",
            f"the endpoint gone within {ctx.timeout:g}s",
            f"accepted, yet still answering Handshakes {ctx.timeout:g}s later",
            t,
        )
