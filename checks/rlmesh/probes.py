"""Probe steps several phases share: the error codes they expect, a fatal error's end, a fresh session."""

from __future__ import annotations

import grpc

from checks.core import NoReply, Report, Transcript
from checks.decision import record
from checks.rlmesh import judging
from checks.rlmesh.client import Endpoint, JoinSession
from checks.rlmesh.common import Contract, finish_session, reset_request, seeds_for
from checks.rlmesh.judging import kind_of
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import env_pb2

INVALID_ACTION = env_pb2.ENV_ERROR_CODE_INVALID_ACTION
UNSUPPORTED = env_pb2.ENV_ERROR_CODE_UNSUPPORTED
NOT_READY = env_pb2.ENV_ERROR_CODE_NOT_READY
TIMEOUT = env_pb2.ENV_ERROR_CODE_TIMEOUT


def refused(
    report: Report, response: env_pb2.JoinResponse, clause_id: str, code: int, where: str, evidence: Transcript
) -> bool:
    """Record whether `response` is the recoverable error `code` that `clause_id` asks for (`judging` decides)."""
    return record(report, judging.recoverable_error(response, clause_id, code, where), evidence)


async def stream_end(session: JoinSession) -> grpc.StatusCode | None:
    """The status the stream ended with, or None when it stayed open (then it is cancelled)."""
    try:
        return (await session.wait_end()).status
    except NoReply:
        session.cancel()
        return None


async def fatal_ends(report: Report, session: JoinSession, response: env_pb2.JoinResponse, t: Transcript) -> bool:
    """After a non-recoverable error, wait for the stream's end and record `judging.fatal_end`; True when it was one."""
    if kind_of(response) != "error" or response.error.is_recoverable:
        return False
    record(report, judging.fatal_end(await stream_end(session)), t)
    return True


async def ensure_session(
    ctx: Ctx, target: Endpoint, session: JoinSession, contract: Contract, t: Transcript
) -> JoinSession:
    """The session if it is still open, else a fresh one (a non-recoverable error ends a stream)."""
    if session.ended is None:
        return session
    finish_session(ctx.report, session, t)
    fresh, _ = await target.join(t, reset_request(seeds_for(ctx, contract.num_envs), []))
    return fresh
