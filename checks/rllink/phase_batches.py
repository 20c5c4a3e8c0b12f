"""The batches phase: a bare EPISODES (no reply), then full on-policy batches, each answered with SET_STATE
within the timeout; over K batches weights_seq_no rises by at least K-1 (MUST), by one each (SHOULD)."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.rllink.codec import encode
from checks.rllink.episodes import batch
from checks.rllink.link import Closed
from checks.rllink.options import Ctx
from checks.rllink.replies import expect_reply
from checks.rllink.session import drop_link, shared_link
from checks.rllink.state_reply import judge_state


async def batches_phase(ctx: Ctx) -> None:
    report, options, state = ctx.report, ctx.options, ctx.state
    link = await shared_link(ctx, "batches")
    dialect = state.dialect
    assert dialect is not None
    steps = state.fragment_length
    if steps is None:
        why = "not judged, because the server's fragment length is unknown: set the fragment_length option"
        report.info("rllink.liveness.on-policy", actual=why)
        report.info("rllink.seq.strict", actual=why)
    first = max(1, (steps or 2) // 2)

    # A bare EPISODES gets no reply: the next frame is the PONG of the PING after it.
    await link.send({"type": "EPISODES", "episodes": batch(options, dialect, first, seed=1)}, dialect)
    try:
        extra = await link.silent_for(options.quiet)
    except Closed as closed:
        report.failed("rllink.episodes.no-reply", expected="no reply", actual=str(closed), evidence=link.transcript)
        await drop_link(ctx)
        raise PhaseStopped("the server closed after a valid EPISODES", link.transcript) from None
    if extra is not None:
        report.failed(
            "rllink.episodes.no-reply", expected="no reply", actual=f"it answered: {extra!r}", evidence=link.transcript
        )
        await drop_link(ctx)
        raise PhaseStopped("the server answered a bare EPISODES; the stream is out of step", link.transcript)
    await link.send({"type": "PING"}, dialect)
    await expect_reply(ctx, link, "PONG", "rllink.episodes.no-reply")
    report.passed("rllink.episodes.no-reply", actual="silence, then the PING's PONG", evidence=link.transcript)
    if steps is None:
        return

    # The rest of the first batch, pipelined with a PING: SET_STATE, then PONG.
    previous = max(state.seqs, default=0)
    rest = {
        "type": "EPISODES_AND_GET_STATE",
        "episodes": batch(options, dialect, steps - first, seed=2),
        "timesteps": steps - first,
    }
    await link.send_raw(encode(rest, dialect) + encode({"type": "PING"}, dialect), "EPISODES_AND_GET_STATE, PING")
    reply = await expect_reply(ctx, link, "SET_STATE", "rllink.liveness.on-policy", overtaken="rllink.order.pipelined")
    rises = [judge_state(ctx, reply, link, "a batch")]
    await expect_reply(ctx, link, "PONG", "rllink.order.pipelined")
    report.passed("rllink.order.pipelined", actual="SET_STATE, then PONG", evidence=link.transcript)

    for round_number in range(1, options.batches):
        episodes = batch(options, dialect, steps, seed=10 + round_number)
        await link.send({"type": "EPISODES_AND_GET_STATE", "episodes": episodes, "timesteps": steps}, dialect)
        reply = await expect_reply(ctx, link, "SET_STATE", "rllink.liveness.on-policy")
        rises.append(judge_state(ctx, reply, link, f"batch {round_number + 1}"))
    report.passed(
        "rllink.liveness.on-policy",
        actual=f"{options.batches} batches of exactly {steps} steps ({state.fragment_source}) each got SET_STATE",
        evidence=link.transcript,
    )
    # Over K batches the sequence rises by at least K-1: RLlib's stale-state race may repeat one, never more.
    rise, least = rises[-1] - previous, len(rises) - 1
    report.check(
        rise >= least,
        "rllink.seq.monotonic",
        expected=f"a rise of at least {least} over {len(rises)} full batches",
        actual=f"from {previous}: {rises} (a rise of {rise})",
        evidence=link.transcript,
    )
    steps_seen = [b - a for a, b in zip([previous, *rises], rises, strict=False)]
    report.check(
        all(step == 1 for step in steps_seen),
        "rllink.seq.strict",
        expected="weights_seq_no +1 per batch",
        actual=f"from {previous}: {rises}",
        evidence=link.transcript,
    )
