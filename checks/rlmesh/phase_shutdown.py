"""Phase `shutdown` (opt-in): ask the endpoint to stop; refusing is fine, accepting means stopping promptly."""

from __future__ import annotations

import asyncio
import time

import grpc

from checks.core import seconds
from checks.rlmesh.client import RpcFailed
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
            report.failed("rlmesh.c2.shutdown", expected="a ShutdownResponse", actual=str(exc), evidence=t)
            return
        base = response.base
        if not base.accepted:
            await target.handshake(t, unavailable_is_unreachable=False)
            report.check(
                bool(base.message.strip()),
                "rlmesh.c2.shutdown",
                expected="refused with a message, still serving",
                actual=f"accepted=false, message {base.message[:120]!r}; a later Handshake was answered",
                evidence=t,
            )
            return
        started = time.monotonic()
        while time.monotonic() - started < ctx.timeout:
            try:
                await target.handshake(t, unavailable_is_unreachable=False)
            except RpcFailed as exc:
                if exc.status is grpc.StatusCode.CANCELLED:
                    # A call that met the server mid-stop is cancelled by it: going away, not yet gone.
                    await asyncio.sleep(0.2)
                    continue
                gone = exc.status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                report.check(
                    gone,
                    "rlmesh.c2.shutdown",
                    expected=f"the endpoint gone within {ctx.timeout:g}s",
                    actual=f"accepted; {seconds(time.monotonic() - started)} later a Handshake got {exc}",
                    evidence=t,
                )
                return
            await asyncio.sleep(0.2)
        report.failed(
            "rlmesh.c2.shutdown",
            expected=f"the endpoint gone within {ctx.timeout:g}s",
            actual=f"accepted, yet still answering Handshakes {ctx.timeout:g}s later",
            evidence=t,
        )
