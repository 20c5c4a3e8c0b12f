from __future__ import annotations

from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.plugrl_client import judging
from checks.plugrl_client.drive import ended_early, exchange_until, judge_no_reconnect
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session


async def basic_phase(ctx: Ctx) -> None:
    """A 2 MiB metadata key, float64 position-coded actions, a stop; then the client should stay away."""
    session = Session(ctx, await accept_client(ctx, "basic"), reuse_offered=False, reconnected=False)
    try:
        await session.open(padded=True)
        envs = await session.infer()
    except PeerClosed as closed:
        session.record(judging.after_padded_metadata(closed.code))
        raise ended_early(session, closed) from None
    except NoReply as silent:
        raise ended_early(session, silent) from None
    session.record(judging.after_padded_metadata(None))
    try:
        await session.answer(envs)
        await session.feedback()
        await exchange_until(session, ctx.options.steps)
    except (PeerClosed, NoReply) as problem:
        raise ended_early(session, problem) from None
    await session.stop()
    session.record([judging.env_ids_not_judged()])
    await judge_no_reconnect(ctx)
