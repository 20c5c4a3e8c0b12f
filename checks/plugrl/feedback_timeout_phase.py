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

from checks.core import PhaseContext
from checks.plugrl import clauses as C
from checks.plugrl.probe import Abort, Probe, describe_close
from checks.wire import Closed, NoReply

# The server's clock starts when it sends the action and the checker's when it reads it, so a
# server that waits exactly the declared time is seen closing a little sooner; 10% covers that.
EARLY_CLOSE_SHARE = 0.9
STRAY_FRAME_LIMIT = 64  # frames tolerated during the wait before the phase gives up on it

PHASE_CLAUSES = (C.FEEDBACK_WAIT, C.FEEDBACK_TIMEOUT_CLOSE, C.FEEDBACK_TIMEOUT_ENFORCED)


async def phase_feedback_timeout(ctx: PhaseContext) -> None:
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
            try:
                if left <= 0:
                    raise NoReply(allowed)
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
                    C.FEEDBACK_WAIT,
                    "nothing from the server while it waits for a feedback",
                    f"a {kind} frame: {shown}",
                    probe.transcript,
                )
            if stray > STRAY_FRAME_LIMIT:
                probe.broken = True
                raise Abort(f"over {STRAY_FRAME_LIMIT} frames arrived while nothing was due")
    finally:
        await probe.close()


def _never_closed(ctx: PhaseContext, probe: Probe, allowed: float) -> None:
    report, declared = ctx.report, ctx.options.feedback_timeout
    report.passed(C.FEEDBACK_WAIT, actual=f"open for all of {allowed:g}s", evidence=probe.transcript)
    report.failed(
        C.FEEDBACK_TIMEOUT_ENFORCED,
        f"a close within {declared:g}s (feedback_timeout) + {ctx.timeout:g}s (timeout)",
        f"still open after {allowed:g}s without a feedback",
        probe.transcript,
    )
    report.unsupported(
        C.FEEDBACK_TIMEOUT_CLOSE, f"the server did not close the connection within {allowed:g}s", probe.transcript
    )


def _closed(ctx: PhaseContext, probe: Probe, closed: Closed, elapsed: float) -> None:
    report, declared = ctx.report, ctx.options.feedback_timeout
    how = f"after {elapsed:.2f}s {describe_close(closed)}"
    if closed.by == "checker":  # it refused what the server sent during the wait (frame_cap, bad frame)
        report.failed(C.FEEDBACK_WAIT, "nothing from the server while it waits for a feedback", how, probe.transcript)
        raise Abort("the checker closed the connection")
    report.check(
        elapsed >= EARLY_CLOSE_SHARE * declared,
        C.FEEDBACK_WAIT,
        f"open for at least {EARLY_CLOSE_SHARE * declared:g}s of the {declared:g}s feedback timeout",
        how,
        probe.transcript,
    )
    report.passed(C.FEEDBACK_TIMEOUT_ENFORCED, f"a close within {declared + ctx.timeout:g}s", how, probe.transcript)
    report.check(
        closed.by == "target" and closed.code == C.GOING_AWAY and closed.reason == C.FEEDBACK_TIMEOUT_REASON,
        C.FEEDBACK_TIMEOUT_CLOSE,
        f"close 1001 {C.FEEDBACK_TIMEOUT_REASON!r}",
        how,
        probe.transcript,
    )
