"""The reuse phase of the plugrl-server suite: section 10.1, reuse-feedback-obs.

A server that lists the feature must answer reuses it can honour and close
with a resync on every one it cannot answer correctly: an env it holds no
observation of (never fed back on this connection, fed back only on another,
or last fed back terminally) and a `reuse` whose length or observation rows
do not fit; a reused row must be answered as the env's own observation would
be. A 0/1 integer mask has one meaning, so answering it and refusing it are
both conforming: only which is recorded. A server that does not list the
feature should refuse an infer carrying `reuse` at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from checks.errors import NoReply, PeerClosed
from checks.plugrl import judging, judging_phases
from checks.plugrl.codec import pack
from checks.plugrl.judging_phases import OFFERED, REUSE_CLAUSES, UNOFFERED
from checks.plugrl.messages import MALFORMED_REUSES, infer_message, reuse_as_ints
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe, together
from checks.plugrl.protocol import REUSE_FEATURE
from checks.plugrl.rows import reused_rows

# Every clause the phase decides, as the suite lists it.
PHASE_CLAUSES = (OFFERED, UNOFFERED, *REUSE_CLAUSES, judging.ALONGSIDE)


async def reuse_phase(ctx: Ctx) -> None:
    holder = Probe(ctx, "reuse")
    try:
        await holder.open()
        if not holder.offers(REUSE_FEATURE):
            holder.record(judging_phases.reuse_offer(offered=False))
            await holder.cycle([0, 1])
            # Env 0 was fed back, so only the missing feature makes this reuse wrong.
            await holder.fault(
                pack(infer_message(ctx.options, [0, 1], reuse=[True, False])),
                UNOFFERED,
                f"reusing env 0 though the server does not list {REUSE_FEATURE}",
            )
            return
        holder.record(judging_phases.reuse_offer(offered=True))
        await _valid_and_impossible_reuses(ctx, holder)
    finally:
        await holder.close()
    for what, malformed in MALFORMED_REUSES:
        await _malformed_reuse(ctx, what, malformed)
    await _integer_mask(ctx)


async def _valid_and_impossible_reuses(ctx: Ctx, holder: Probe) -> None:
    # Each batch sent in full first, to compare its reused answer with.
    in_order = await holder.cycle([0, 1])
    reversed_order = await holder.cycle([1, 0])
    repeat = await holder.infer([0, 1])
    await holder.feedback([0, 1], done=[False, True])
    # Env 1's episode ended, so it sends its observation; env 0 reuses.
    partial = await holder.infer([0, 1], at_stake="plugrl.10.1.reuse-answered", reuse=[True, False])
    await holder.feedback([0, 1])
    # Reversed, so a cache kept by position rather than by env fills each row with the other env.
    swapped = await holder.infer([1, 0], at_stake="plugrl.10.1.reuse-all-rows", reuse=[True, True])
    await holder.feedback([1, 0], done=[False, True])
    pairs = [("[0, 1] reusing env 0", partial, in_order), ("[1, 0] reusing both", swapped, reversed_order)]
    holder.record(reused_rows(in_order, repeat, pairs))
    # Env 1's last feedback, on this connection, was not terminal: another
    # connection must still not reuse it, nor an env nobody fed back.
    for clause, env, what in (
        ("plugrl.10.1.reuse-connection-scoped", 1, "reusing env 1, fed back (not terminal) only on another connection"),
        ("plugrl.10.1.reuse-unknown-env", 7, "reusing env 7, never fed back"),
    ):
        other = Probe(ctx, f"reuse: {what}")
        try:
            await other.open(alongside=True)
            wrong = other.fault(pack(infer_message(ctx.options, [env], reuse=[True])), clause, what)
            await together(holder.infer([1], reuse=[True], timeout=2 * ctx.timeout), _then_close(wrong, other))
        finally:
            await other.close()
        await holder.feedback([1])
    # Env 0's last feedback ended its episode: what it would reuse is a terminal observation.
    await holder.fault(
        pack(infer_message(ctx.options, [0, 1], reuse=[True, False])),
        "plugrl.10.1.reuse-after-terminal",
        "reusing env 0 right after its episode ended",
    )


async def _malformed_reuse(ctx: Ctx, what: str, malformed: Callable[[Any], dict[str, Any]]) -> None:
    """On a connection of its own, after envs 0 and 1 were fed back, so only the form is wrong."""
    probe = Probe(ctx, f"reuse: {what}")
    try:
        await probe.open()
        await probe.cycle([0, 1])
        await probe.fault(pack(malformed(ctx.options)), "plugrl.10.1.reuse-malformed", what)
    finally:
        await probe.close()


async def _integer_mask(ctx: Ctx) -> None:
    """On a connection of its own, after envs 0 and 1 were fed back: reusing env 0 with the mask [1, 0] as <i8."""
    probe = Probe(ctx, "reuse: a 0/1 integer mask")
    try:
        await probe.open()
        await probe.cycle([0, 1])
        await probe.send(reuse_as_ints(ctx.options), "plugrl.10.1.reuse-integer-mask")
        assert probe.ws is not None
        outcome: PeerClosed | NoReply | tuple[str, str]
        try:
            outcome = probe.decoder.summarize(await probe.ws.recv())
        except NoReply as silence:
            probe.broken = True
            outcome = silence
        except PeerClosed as closed:
            outcome = closed
        probe.record(judging_phases.integer_mask(outcome))
    finally:
        await probe.close()


async def _then_close(step: Awaitable[Any], probe: Probe) -> None:
    """Run a step, then close its connection so a batching server stops waiting for it."""
    try:
        await step
    finally:
        await probe.close()
