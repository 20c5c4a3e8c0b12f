"""The stop phase (opt-in): exchange until the server ends the run with 1001 plugrl-server-stop (SPEC 7.1)."""

from __future__ import annotations

from checks.core import NoReply
from checks.plugrl.codec import pack
from checks.plugrl.messages import feedback_message, infer_message
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe
from checks.plugrl.protocol import GOING_AWAY, STOP_REASON
from checks.wire import Closed


async def stop_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    probe = Probe(ctx, "until stop")
    try:
        await probe.open()
        assert probe.ws is not None
        for count in range(options.max_exchanges):
            try:
                await probe.ws.send(pack(infer_message(options, [0, 1, 2])), "infer [0, 1, 2]")
                await probe.ws.recv()
                done = [count % 5 == 4] * 3
                await probe.ws.send(pack(feedback_message(options, [0, 1, 2], done)), "feedback [0, 1, 2]")
            except Closed as closed:
                report.check(
                    closed.by == "target" and closed.code == GOING_AWAY and closed.reason == STOP_REASON,
                    "plugrl.7.1.stop-close",
                    expected=f"close 1001 {STOP_REASON!r}",
                    actual=f"after {count} exchanges, {closed}",
                    evidence=probe.transcript,
                )
                return
            except NoReply as exc:
                report.failed(
                    "plugrl.7.1.stop-close",
                    expected="an answer or the stop",
                    actual=f"nothing arrived within {exc.timeout:g}s",
                    evidence=probe.transcript,
                )
                return
        report.failed(
            "plugrl.7.1.stop-close",
            expected=f"the stop within max_exchanges = {options.max_exchanges}",
            actual="the server was still answering",
            evidence=probe.transcript,
        )
    finally:
        await probe.close()


# ---------------------------------------------------------------- the suite
