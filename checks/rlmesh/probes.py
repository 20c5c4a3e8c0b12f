"""Probe steps several phases share: the error codes they expect, a fatal error's end, a fresh session."""

from __future__ import annotations

from checks.core import NoReply, Report, Transcript
from checks.rlmesh.client import Endpoint, JoinSession
from checks.rlmesh.common import Contract, describe, finish_session, kind_of, recoverable, reset_request, seeds_for
from checks.rlmesh.options import Ctx
from checks.rlmesh.proto import env_pb2

INVALID_ACTION = env_pb2.ENV_ERROR_CODE_INVALID_ACTION
UNSUPPORTED = env_pb2.ENV_ERROR_CODE_UNSUPPORTED
NOT_READY = env_pb2.ENV_ERROR_CODE_NOT_READY
TIMEOUT = env_pb2.ENV_ERROR_CODE_TIMEOUT


def refused(
    report: Report, response: env_pb2.JoinResponse, clause_id: str, code: int, where: str, evidence: Transcript
) -> bool:
    """Whether `response` is the recoverable error `code` that `clause_id` asks for."""
    ok = recoverable(response, code)
    name = env_pb2.EnvErrorCode.Name(code).removeprefix("ENV_ERROR_CODE_")
    report.check(
        ok, clause_id, expected=f"a recoverable {name}", actual=f"{where}: {describe(response)}", evidence=evidence
    )
    return ok


async def fatal_ends(report: Report, session: JoinSession, response: env_pb2.JoinResponse, t: Transcript) -> bool:
    """After a non-recoverable error the stream must end; True when the session is over."""
    if kind_of(response) != "error" or response.error.is_recoverable:
        return False
    try:
        ended = await session.wait_end()
        report.passed(
            "rlmesh.e2.fatal-ends-stream", actual=f"the stream ended with gRPC {ended.status.name}", evidence=t
        )
    except NoReply:
        report.failed(
            "rlmesh.e2.fatal-ends-stream",
            expected="the end of the stream",
            actual="the stream stayed open after a non-recoverable error",
            evidence=t,
        )
        session.cancel()
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
