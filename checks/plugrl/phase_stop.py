"""The stop phase (opt-in): exchange until the server ends the run with 1001 plugrl-server-stop (SPEC 7.1)."""

from __future__ import annotations

from checks.errors import NoReply, PeerClosed
from checks.plugrl import judging_phases
from checks.plugrl.codec import pack
from checks.plugrl.messages import feedback_message, infer_message
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe


async def stop_phase(ctx: Ctx) -> None:
    options = ctx.options
    probe = Probe(ctx, "until stop")
    try:
        await probe.open()
        assert probe.ws is not None
        ended: PeerClosed | NoReply | None = None
        count = 0
        for count in range(options.max_exchanges):  # noqa: B007 (the count is judged after the loop)
            try:
                await probe.ws.send(pack(infer_message(options, [0, 1, 2])), "infer [0, 1, 2]")
                await probe.ws.recv()
                done = [count % 5 == 4] * 3
                await probe.ws.send(pack(feedback_message(options, [0, 1, 2], done)), "feedback [0, 1, 2]")
            except (PeerClosed, NoReply) as problem:
                ended = problem
                break
        probe.record([judging_phases.stop_close(ended, count, options.max_exchanges)])
    finally:
        await probe.close()
