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

from checks.errors import NoReply, PeerClosed, PhaseStopped
from checks.plugrl import judging_phases
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe

STRAY_FRAME_LIMIT = 64  # frames tolerated during the wait before the phase gives up on it


async def feedback_timeout_phase(ctx: Ctx) -> None:
    declared = ctx.options.feedback_timeout
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
                probe.record(judging_phases.never_closed(allowed, declared, ctx.timeout))
                return
            try:
                frame = await probe.ws.recv(left)
            except NoReply:
                probe.record(judging_phases.never_closed(allowed, declared, ctx.timeout))
                return
            except PeerClosed as closed:
                probe.judged(judging_phases.closed_while_owed(closed, loop.time() - started, declared, ctx.timeout))
                return
            stray += 1
            if stray == 1:
                probe.record([judging_phases.frame_during_wait(*probe.decoder.summarize(frame))])
            if stray > STRAY_FRAME_LIMIT:
                probe.broken = True
                raise PhaseStopped(f"over {STRAY_FRAME_LIMIT} frames arrived while nothing was due", probe.transcript)
    finally:
        await probe.close()
