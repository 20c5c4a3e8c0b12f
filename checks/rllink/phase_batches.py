"""The batches phase: a bare EPISODES (no reply), then full on-policy batches, each answered with SET_STATE
within the timeout; over K batches weights_seq_no rises by at least K-1 (MUST), by one each (SHOULD)."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.errors import PeerClosed
from checks.rllink import judging
from checks.rllink.codec import Dialect, encode
from checks.rllink.episodes import batch
from checks.rllink.link import Link
from checks.rllink.options import Ctx
from checks.rllink.replies import expect_reply
from checks.rllink.session import drop_link, shared_link
from checks.rllink.state_reply import judge_state


async def batches_phase(ctx: Ctx) -> None:
    report, state = ctx.report, ctx.state
    link = await shared_link(ctx, "batches")
    dialect = state.dialect
    assert dialect is not None
    steps = state.fragment_length
    if steps is None:
        record(report, judging.fragment_unknown())
    first = max(1, (steps or 2) // 2)
    await _bare_episodes(ctx, link, dialect, first)
    if steps is None:
        return
    await _full_batches(ctx, link, dialect, steps, first)


async def _bare_episodes(ctx: Ctx, link: Link, dialect: Dialect, steps: int) -> None:
    """A bare EPISODES gets no reply: the next frame is the PONG of the PING after it."""
    await link.send({"type": "EPISODES", "episodes": batch(ctx.options, dialect, steps, seed=1)}, dialect)
    try:
        extra, closed = await link.silent_for(ctx.options.quiet), None
    except PeerClosed as exc:
        extra, closed = None, str(exc)
    miss = judging.episodes_silence(extra, closed)
    if miss is not None:
        record(ctx.report, miss, link.transcript)
        await drop_link(ctx)
        if closed is not None:
            raise PhaseStopped("the server closed after a valid EPISODES", link.transcript)
        raise PhaseStopped("the server answered a bare EPISODES; the stream is out of step", link.transcript)
    await link.send({"type": "PING"}, dialect)
    await expect_reply(ctx, link, "PONG", "rllink.episodes.no-reply")
    record(ctx.report, judging.episodes_unanswered("PING", "PONG"), link.transcript)


async def _full_batches(ctx: Ctx, link: Link, dialect: Dialect, steps: int, first: int) -> None:
    """The rest of the first batch pipelined with a PING, then `batches - 1` full batches, each with its SET_STATE."""
    report, options, state = ctx.report, ctx.options, ctx.state
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
    record(report, judging.replies_in_order("SET_STATE, then PONG"), link.transcript)

    for round_number in range(1, options.batches):
        episodes = batch(options, dialect, steps, seed=10 + round_number)
        await link.send({"type": "EPISODES_AND_GET_STATE", "episodes": episodes, "timesteps": steps}, dialect)
        reply = await expect_reply(ctx, link, "SET_STATE", "rllink.liveness.on-policy")
        rises.append(judge_state(ctx, reply, link, f"batch {round_number + 1}"))
    record(report, judging.batches_answered(options.batches, steps, state.fragment_source), link.transcript)
    record(report, judging.batch_rises(previous, rises), link.transcript)
