"""Phase `shutdown` (opt-in): ask the endpoint to stop; refusing is fine, accepting means stopping promptly."""

from __future__ import annotations

import asyncio
import time

import grpc

from checks.core import Transcript
from checks.decision import record
from checks.rlmesh import judging_errors
from checks.rlmesh.client import Endpoint, RpcFailed
from checks.rlmesh.options import Ctx
from checks.rlmesh.session import phase_endpoint


async def shutdown_phase(ctx: Ctx) -> None:
    """Ask the endpoint to stop. Refusing is fine; accepting means it must actually stop, promptly."""
    report = ctx.report
    async with phase_endpoint(ctx) as target:
        t = report.transcript("Shutdown")
        await target.handshake(t)
        try:
            response = await target.shutdown(t, "rlconform shutdown probe")
        except RpcFailed as exc:
            record(report, judging_errors.shutdown_failed(exc), t)
            return
        if not response.base.accepted:
            await target.handshake(t, unavailable_is_unreachable=False)
            record(report, judging_errors.shutdown_refused(response.base.message), t)
            return
        started = time.monotonic()
        gone = await first_unanswered_handshake(target, t, ctx.timeout)
        record(report, judging_errors.shutdown_accepted(gone, time.monotonic() - started, ctx.timeout), t)


async def first_unanswered_handshake(target: Endpoint, t: Transcript, timeout: float) -> RpcFailed | None:
    """Handshake every 0.2 s for `timeout` seconds: the first failure other than a cancel, or None if all answered."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            await target.handshake(t, unavailable_is_unreachable=False)
        except RpcFailed as exc:
            if exc.status is not grpc.StatusCode.CANCELLED:
                return exc
            # A call that met the server mid-stop is cancelled by it: going away, not yet gone.
        await asyncio.sleep(0.2)
    return None
