"""Phase `errors`: malformed requests get the protocol's recoverable errors and the session goes on."""

from __future__ import annotations

import time

import grpc
import numpy as np

from checks.core import PhaseContext, Report, Transcript, seconds
from checks.rlmesh import codec
from checks.rlmesh.client import Endpoint, JoinSession, NoReply, OverLimit, RpcFailed, StrayResponse, StreamEnded
from checks.rlmesh.common import (
    Contract,
    describe,
    endpoint,
    episode_ids,
    fetch_contract,
    finish_session,
    kind_of,
    reset_request,
    rng_for,
    seeds_for,
    step_request,
)
from checks.rlmesh.proto import env_pb2, spaces_pb2

INVALID_ACTION = env_pb2.ENV_ERROR_CODE_INVALID_ACTION
UNSUPPORTED = env_pb2.ENV_ERROR_CODE_UNSUPPORTED
NOT_READY = env_pb2.ENV_ERROR_CODE_NOT_READY
TIMEOUT = env_pb2.ENV_ERROR_CODE_TIMEOUT
TIMED_STEPS = 3
TIMEOUT_FLOOR = 0.020  # a step faster than this leaves no deadline both short enough and above scheduling noise


def recoverable(response: env_pb2.JoinResponse, *codes: int) -> bool:
    return kind_of(response) == "error" and response.error.is_recoverable and response.error.code in codes


async def fatal_ends(report: Report, session: JoinSession, response: env_pb2.JoinResponse, t: Transcript) -> bool:
    """After a non-recoverable error the stream must end; True when the session is over."""
    if kind_of(response) != "error" or response.error.is_recoverable:
        return False
    try:
        ended = await session.wait_end()
        report.passed("rlmesh.e2.fatal-ends-stream", actual=f"the stream ended with gRPC {ended.code.name}", evidence=t)
    except NoReply:
        report.failed(
            "rlmesh.e2.fatal-ends-stream",
            "the end of the stream",
            "the stream stayed open after a non-recoverable error",
            t,
        )
        session.cancel()
    return True


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


async def errors_phase(ctx: PhaseContext) -> None:
    report = ctx.report
    async with endpoint(ctx) as target:
        t = report.transcript("Join: step before reset")
        contract = await fetch_contract(target, t)
        await step_before_reset(ctx, target, contract, t)

        t = report.transcript("Join: malformed requests")
        seeds, lanes = seeds_for(ctx, contract.num_envs), contract.num_envs
        valid = codec.sample(contract.act, rng_for(ctx, 30), lanes)
        session, _ = await target.join(t, reset_request(seeds, episode_ids(lanes)))
        try:
            reference = []
            for _ in range(2):
                await session.request(reset_request(seeds, episode_ids(lanes)))
                reference.append(await session.request(step_request(valid)))
            deterministic = (
                kind_of(reference[0]) == kind_of(reference[1]) == "step"
                and reference[0].step.observation == reference[1].step.observation
            )
            for label, request in malformed_actions(contract, rng_for(ctx, 34)):
                session = await ensure_session(ctx, target, session, contract, t)
                await session.request(reset_request(seeds, episode_ids(lanes)))
                response = await session.request(request)
                report.check(
                    recoverable(response, INVALID_ACTION),
                    "rlmesh.v3.bad-action-rejected",
                    "a recoverable INVALID_ACTION",
                    f"{label}: {describe(response)}",
                    t,
                )
                if await fatal_ends(report, session, response, t):
                    continue
                after = await session.request(step_request(valid))
                report.check(
                    kind_of(after) == "step",
                    "rlmesh.e2.session-usable",
                    "a step response",
                    f"valid step after {label}: {describe(after)}",
                    t,
                )
                if deterministic and kind_of(after) == "step" and kind_of(response) == "error":
                    same = after.step.observation == reference[0].step.observation
                    report.check(
                        same,
                        "rlmesh.v3.state-unchanged",
                        "the observation of a replay without the bad action",
                        f"after {label}: " + ("unchanged" if same else "the env state moved"),
                        t,
                    )
            if not deterministic:
                report.info(
                    "rlmesh.v3.state-unchanged", "the env is not deterministic under a seed; not judged", evidence=t
                )
            session = await bad_indices(ctx, target, session, contract, t)
            session = await ensure_session(ctx, target, session, contract, t)
            response = await session.request(env_pb2.JoinRequest())
            report.check(
                recoverable(response, UNSUPPORTED),
                "rlmesh.e2.empty-request",
                "a recoverable UNSUPPORTED",
                f"empty JoinRequest: {describe(response)}",
                t,
            )
            if not await fatal_ends(report, session, response, t):
                after = await session.request(step_request(valid))
                report.check(
                    kind_of(after) == "step",
                    "rlmesh.e2.empty-request",
                    "the stream still answers a step",
                    f"step after the empty request: {describe(after)}",
                    t,
                )
            session = await ensure_session(ctx, target, session, contract, t)
            await step_timeout(ctx, session, contract, valid, t)
            session = await ensure_session(ctx, target, session, contract, t)
            await second_join(ctx, target, session, valid, t)
        except (StreamEnded, NoReply) as exc:
            why = (
                "a message exceeded the max_message_bytes option"
                if isinstance(exc, OverLimit)
                else "the malformed-request session broke off"
            )
            report.error("rlmesh.e2.session-usable", f"{why}: {exc}", t)
        finally:
            finish_session(report, session, t)
            await session.close()

        t = report.transcript("Handshake and Join after the probes")
        try:
            await target.handshake(t)
            fresh, response = await target.join(t, reset_request(seeds, episode_ids(lanes)))
        except (RpcFailed, StreamEnded, NoReply) as exc:
            report.failed("rlmesh.e1.survives", "a Handshake and an answer on a new Join", str(exc), t)
            return
        report.check(
            kind_of(response) in ("reset", "error"),
            "rlmesh.e1.survives",
            "a Handshake and an answer on a new Join",
            f"new session's reset: {describe(response)}",
            t,
        )
        await fresh.close()


async def step_before_reset(ctx: PhaseContext, target: Endpoint, contract: Contract, t: Transcript) -> None:
    report = ctx.report
    action = codec.sample(contract.act, rng_for(ctx, 31), contract.num_envs)
    session, response = await target.join(t, step_request(action))
    if kind_of(response) == "step":
        actual = "the step was accepted (env state carried over from an earlier session)"
    else:
        actual = describe(response)
    report.check(
        recoverable(response, NOT_READY),
        "rlmesh.e2.step-before-reset",
        "a recoverable NOT_READY",
        f"first request of a session is a step: {actual}",
        t,
    )
    await fatal_ends(report, session, response, t)
    finish_session(report, session, t)
    await session.close()


async def ensure_session(
    ctx: PhaseContext, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    """The session if it is still open, else a fresh one (a non-recoverable error ends a stream)."""
    if session.ended is None:
        return session
    finish_session(ctx.report, session, t)
    fresh, _ = await target.join(t, reset_request(seeds_for(ctx, contract.num_envs), []))
    return fresh


async def bad_indices(
    ctx: PhaseContext, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
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
        report.check(
            recoverable(response, *codes),
            "rlmesh.l1.bad-index",
            " or ".join(env_pb2.EnvErrorCode.Name(c).removeprefix("ENV_ERROR_CODE_") for c in codes) + ", recoverable",
            f"{label}: {describe(response)}",
            t,
        )
        await fatal_ends(report, session, response, t)
    return session


async def step_timeout(ctx: PhaseContext, session: JoinSession, contract: Contract, valid, t: Transcript) -> None:
    """A step whose `timeout_ms` is a quarter of the measured step time must come back as a recoverable TIMEOUT."""
    report = ctx.report
    await session.request(reset_request(seeds_for(ctx, contract.num_envs), episode_ids(contract.num_envs)))
    times = []
    for _ in range(TIMED_STEPS):
        started = time.monotonic()
        response = await session.request(step_request(valid))
        if kind_of(response) != "step":
            report.error("rlmesh.e3.timeout", f"not judged: a valid step got {describe(response)}", t)
            await fatal_ends(report, session, response, t)
            return
        times.append(time.monotonic() - started)
    step_time = min(times)
    if step_time < TIMEOUT_FLOOR:
        report.info(
            "rlmesh.e3.timeout",
            f"a step takes {seconds(step_time)}: too fast to give it a shorter deadline than it needs",
            evidence=t,
        )
        return
    deadline_ms = max(1, int(step_time * 1000 / 4))
    started = time.monotonic()
    response = await session.request(
        env_pb2.JoinRequest(step=env_pb2.StepRequest(action=valid, timeout_ms=deadline_ms))
    )
    took = time.monotonic() - started
    timing = f"after {seconds(took)}, for a {deadline_ms} ms deadline on a step that takes {seconds(step_time)}"
    ok = recoverable(response, TIMEOUT)
    report.check(ok, "rlmesh.e3.timeout", "a recoverable TIMEOUT", f"{describe(response)} {timing}", t)
    if await fatal_ends(report, session, response, t) or not ok:
        return
    try:
        after = await session.request(step_request(valid))
    except StrayResponse as exc:  # most likely the timed-out step answered after all: one request, two answers
        report.failed("rlmesh.e3.timeout", "one answer (the TIMEOUT) for the timed-out step", str(exc), t)
        return
    report.check(
        kind_of(after) == "step",
        "rlmesh.e3.timeout",
        "the stream still answers a step",
        f"step after the TIMEOUT: {describe(after)}",
        t,
    )


async def second_join(ctx: PhaseContext, target: Endpoint, session: JoinSession, valid, t: Transcript) -> None:
    report = ctx.report
    t2 = report.transcript("Join: a second, concurrent session")
    try:
        other, response = await target.join(t2, reset_request(seeds_for(ctx, 1), []), slot_wait=0)
        report.failed(
            "rlmesh.e4.single-session",
            "gRPC FAILED_PRECONDITION",
            f"a second Join was served: {describe(response)}",
            [t, t2],
        )
        other.cancel()
    except StreamEnded as ended:
        report.check(
            ended.code is grpc.StatusCode.FAILED_PRECONDITION,
            "rlmesh.e4.single-session",
            "gRPC FAILED_PRECONDITION",
            f"second Join ended with gRPC {ended.code.name}",
            [t, t2],
        )
    after = await session.request(step_request(valid))
    report.check(
        kind_of(after) == "step",
        "rlmesh.e4.single-session",
        "the first session still answers",
        f"first session's step after the second Join: {describe(after)}",
        [t, t2],
    )
