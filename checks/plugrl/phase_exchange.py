"""The exchange phase: the ordinary traffic of a PlugRL client, and what every answer must look like.

One connection offers permessage-deflate (SPEC 1.1); one runs infers and
feedbacks with ragged batches, differing feedback sets and nested episode
info, then the first batch again with one env's observation nudged at a time,
then plain rounds; its answers are matched row by row once they show that
each row follows its env's observation (5.3). A 2.25 MiB infer comes last, on a connection of its
own, so a frame cap fails that clause alone.
"""

from __future__ import annotations

from checks.errors import Refused
from checks.plugrl import judging_phases
from checks.plugrl.options import Ctx
from checks.plugrl.probe import Probe
from checks.plugrl.rows import rows_follow_envs


async def exchange_phase(ctx: Ctx) -> None:
    options = ctx.options
    offered = Probe(ctx, "offers permessage-deflate")
    try:
        await offered.connect(compression="deflate")
        assert offered.ws is not None
        offered.record([judging_phases.compression(offered.ws.extensions)])
    except Refused as exc:
        offered.record([judging_phases.compression(exc)])
    finally:
        await offered.close()

    probe = Probe(ctx, "exchange")
    try:
        await probe.open()
        first = await probe.infer([0, 1, 2])
        # The done env carries nested per-env episode statistics in info.
        await probe.feedback([0, 1, 2], done=[True, False, False])
        await probe.infer([0, 1, 2], at_stake="plugrl.5.4.nested-info")
        await probe.feedback([0, 1, 2])
        single = await probe.infer([0], at_stake="plugrl.5.2.ragged-batches")  # n goes 3 -> 1
        await probe.feedback([0])
        await probe.infer([0, 1, 2], at_stake="plugrl.5.2.ragged-batches")  # and 1 -> 3
        await probe.feedback([1, 2])  # env 0's chunk is still running
        reordered = await probe.infer([2, 1], at_stake="plugrl.4.3.feedback-set")
        await probe.feedback([0, 2, 1], done=[False, True, False])
        # Whether each row follows its env's observation, which the row check relies on.
        nudged = {env: await probe.cycle([0, 1, 2], at_stake="plugrl.4.2.keeps-open", nudged=env) for env in (0, 1, 2)}
        repeats = [await probe.cycle([0, 1, 2], at_stake="plugrl.4.2.keeps-open") for _ in range(options.exchanges)]
        probe.record(rows_follow_envs(first, repeats[-1], nudged, {(0,): single, (2, 1): reordered}))
    finally:
        await probe.close()
    # Last, and as the first infer of a connection of its own: a frame cap fails this
    # clause alone, and a server that tires after some infers is not taken for one.
    big = Probe(ctx, "a 2.25 MiB infer")
    try:
        await big.open()
        await big.infer([0, 1, 2], at_stake="plugrl.1.1.large-frame", big=True)
        await big.feedback([0, 1, 2], at_stake="plugrl.1.1.large-frame")
    finally:
        await big.close()
