"""The feedback-timeout phase of the plugrl-server suite: SPEC 4.2 and 7.3.

A server waits a fixed time (60 s unless the constant is raised on both
sides) for the feedback of an action it sent; then it closes the connection
with 1001 `Feedback timeout`. The phase sends one infer, reads the action and
sends nothing more, for up to `feedback_timeout` plus one step deadline.

Judged separately: how long the server waited (closing far sooner strands
clients that may take that long), how it closed, and whether it closed at
all (a SHOULD: the checker cannot know that a server raised the constant).
Opt-in and run only when named: by default it waits over a minute.
"""

from __future__ import annotations

import asyncio

from checks.core import NoReply, PhaseStopped
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe, describe_close
from checks.plugrl.protocol import FEEDBACK_TIMEOUT_REASON, GOING_AWAY
from checks.wire import Closed

# The server's clock starts when it sends the action and the checker's when it reads it, so a
# server that waits exactly the declared time is seen closing a little sooner; 10% covers that.
EARLY_CLOSE_SHARE = 0.9
STRAY_FRAME_LIMIT = 64  # frames tolerated during the wait before the phase gives up on it


async def feedback_timeout_phase(ctx: Ctx) -> None:
    report, declared = ctx.report, ctx.options.feedback_timeout
    probe = Probe(ctx, "no feedback after the action")
    try:
        await probe.open()
        await probe.infer([0, 1])
        assert probe.ws is not None
        loop = asyncio.get_running_loop()
        started = loop.time()
        allowed = declared + ctx.timeout
        stray = 0
        while True:
            left = started + allowed - loop.time()
            if left <= 0:
                _never_closed(ctx, probe, allowed)
                return
            try:
                frame = await probe.ws.recv(left)
            except NoReply:
                _never_closed(ctx, probe, allowed)
                return
            except Closed as closed:
                _closed(ctx, probe, closed, loop.time() - started)
                return
            stray += 1
            if stray == 1:
                kind, shown = probe.decoder.summarize(frame)
                report.failed(
                    "plugrl.7.3.feedback-wait",
                    expected="nothing from the server while it waits for a feedback",
                    actual=f"a {kind} frame: {shown}",
                    evidence=probe.transcript,
                )
            if stray > STRAY_FRAME_LIMIT:
                probe.broken = True
                raise PhaseStopped(f"over {STRAY_FRAME_LIMIT} frames arrived while nothing was due", probe.transcript)
    finally:
        await probe.close()


def _never_closed(ctx: Ctx, probe: Probe, allowed: float) -> None:
    report, declared = ctx.report, ctx.options.feedback_timeout
    report.passed("plugrl.7.3.feedback-wait", actual=f"open for all of {allowed:g}s", evidence=probe.transcript)
    report.failed(
        "plugrl.7.3.feedback-timeout-enforced",
        expected=f"a close within {declared:g}s (feedback_timeout) + {ctx.timeout:g}s (timeout)",
        actual=f"still open after {allowed:g}s without a feedback",
        evidence=probe.transcript,
    )
    report.unsupported(
        "plugrl.7.3.feedback-timeout-close",
        f"the server did not close the connection within {allowed:g}s",
        probe.transcript,
    )


def _closed(ctx: Ctx, probe: Probe, closed: Closed, elapsed: float) -> None:
    report, declared = ctx.report, ctx.options.feedback_timeout
    how = f"after {elapsed:.2f}s {describe_close(closed)}"
    if closed.by == "checker":  # it refused what the server sent during the wait (frame_cap, bad frame)
        report.failed(
            "plugrl.7.3.feedback-wait",
            expected="nothing from the server while it waits for a feedback",
            actual=how,
            evidence=probe.transcript,
        )
        raise PhaseStopped("the checker closed the connection", probe.transcript)
    report.check(
        elapsed >= EARLY_CLOSE_SHARE * declared,
        "plugrl.7.3.feedback-wait",
        expected=f"open for at least {EARLY_CLOSE_SHARE * declared:g}s of the {declared:g}s feedback timeout",
        actual=how,
        evidence=probe.transcript,
    )
    report.passed(
        "plugrl.7.3.feedback-timeout-enforced",
        expected=f"a close within {declared + ctx.timeout:g}s",
        actual=how,
        evidence=probe.transcript,
    )
    report.check(
        closed.by == "target" and closed.code == GOING_AWAY and closed.reason == FEEDBACK_TIMEOUT_REASON,
        "plugrl.7.3.feedback-timeout-close",
        expected=f"close 1001 {FEEDBACK_TIMEOUT_REASON!r}",
        actual=how,
        evidence=probe.transcript,
    )
