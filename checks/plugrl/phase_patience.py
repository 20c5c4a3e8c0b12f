"""The patience phase: a feedback sent `patience` seconds after its action keeps the connection open (SPEC 7.3)."""

from __future__ import annotations

from checks.core import NoReply
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe
from checks.wire import Closed


async def patience_phase(ctx: Ctx) -> None:
    options = ctx.options
    probe = Probe(ctx, "late feedback")
    try:
        await probe.open()
        await probe.infer([0, 1])
        assert probe.ws is not None
        try:
            frame = await probe.ws.recv(options.patience)
        except NoReply:
            pass  # the quiet we wanted: nothing was due
        except Closed as closed:
            ctx.report.failed(
                "plugrl.7.3.late-feedback",
                expected=f"the connection open through a {options.patience:g}s pause",
                actual=f"closed during it: {closed}",
                evidence=probe.transcript,
            )
            return
        else:
            kind, shown = probe.decoder.summarize(frame)
            ctx.report.failed(
                "plugrl.7.3.late-feedback",
                expected="nothing from the server while the client steps",
                actual=f"a {kind} frame: {shown}",
                evidence=probe.transcript,
            )
            return
        await probe.feedback([0, 1], at_stake="plugrl.7.3.late-feedback")
        await probe.infer([0, 1], at_stake="plugrl.7.3.late-feedback")
        await probe.feedback([0, 1])
    finally:
        await probe.close()
