from __future__ import annotations

from checks.decision import record
from checks.errors import NoReply, PeerClosed, PhaseStopped
from checks.listen import accept_client
from checks.plugrl.protocol import RESYNC_REASON
from checks.plugrl_client import judging
from checks.plugrl_client.drive import ended_early, exchange_until
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session

RECONNECT_GRACE = 6.0  # seconds: clients back off before reconnecting (the reference retries after 5 s)


async def resync_phase(ctx: Ctx) -> None:
    """Halfway, a resync right after an action: the client must reconnect and start with an infer."""
    first = Session(ctx, await accept_client(ctx, "resync"), reuse_offered=False, reconnected=False)
    try:
        await first.open(padded=False)
        await exchange_until(first, ctx.options.steps // 2)
        await first.answer(await first.infer())
    except (PeerClosed, NoReply) as problem:
        raise ended_early(first, problem) from None
    await first.close(RESYNC_REASON)
    first.lose_held()
    wait = max(ctx.timeout, RECONNECT_GRACE)
    try:
        accepted = await ctx.listener.accept(wait)
    except NoReply:
        first.record([judging.reconnect_after_resync(None, wait)])
        raise PhaseStopped("the client did not reconnect after the resync", first.transcript) from None
    record(ctx.report, judging.reconnect_after_resync(accepted.peer, wait))
    second = Session(ctx, accepted, reuse_offered=False, reconnected=True)
    try:
        await second.open(padded=False)
        await exchange_until(second, ctx.options.steps - first.feedbacks)
    except (PeerClosed, NoReply) as problem:
        raise ended_early(second, problem) from None
    await second.stop()
