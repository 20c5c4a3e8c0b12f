from __future__ import annotations

from checks.decision import record
from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.plugrl_client import judging
from checks.plugrl_client.drive import ended_early, exchange_until
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session


async def reuse_phase(ctx: Ctx) -> None:
    """The metadata lists reuse-feedback-obs: every reuse must name an observation the server holds."""
    session = Session(ctx, await accept_client(ctx, "reuse"), reuse_offered=True, reconnected=False)
    try:
        await session.open(padded=False)
        await exchange_until(session, ctx.options.steps)
    except (PeerClosed, NoReply) as problem:
        raise ended_early(session, problem) from None
    await session.stop()
    record(ctx.report, judging.reuse_used(session.reused_rows))
