"""The patience phase: a feedback sent `patience` seconds after its action keeps the connection open (SPEC 7.3)."""

from __future__ import annotations

from checks.errors import NoReply, PeerClosed
from checks.plugrl import judging_phases
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe


async def patience_phase(ctx: Ctx) -> None:
    options = ctx.options
    probe = Probe(ctx, "late feedback")
    try:
        await probe.open()
        await probe.infer([0, 1])
        assert probe.ws is not None
        outcome: PeerClosed | NoReply | tuple[str, str]
        try:
            outcome = probe.decoder.summarize(await probe.ws.recv(options.patience))
        except (NoReply, PeerClosed) as problem:
            outcome = problem
        broken = judging_phases.late_feedback_pause(options.patience, outcome)
        if broken is not None:
            probe.record([broken])
            return
        await probe.feedback([0, 1], at_stake="plugrl.7.3.late-feedback")
        await probe.infer([0, 1], at_stake="plugrl.7.3.late-feedback")
        await probe.feedback([0, 1])
    finally:
        await probe.close()
