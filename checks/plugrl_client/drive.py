"""The exchange loop every scenario runs, and how its ends become verdicts."""

from __future__ import annotations

from checks.decision import record
from checks.errors import NoReply, PeerClosed, PhaseStopped
from checks.listen import Accepted
from checks.plugrl.protocol import STOP_REASON
from checks.plugrl_client import judging
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session


async def exchange_until(session: Session, feedbacks: int) -> None:
    """infer -> action -> feedback rounds until the session has `feedbacks` feedbacks."""
    while session.feedbacks < feedbacks:
        envs = await session.infer()
        await session.answer(envs)
        await session.feedback()


def ended_early(session: Session, problem: PeerClosed | NoReply) -> PhaseStopped:
    """The client closed or fell silent before the scenario ended it."""
    if isinstance(problem, NoReply):
        return session.stopped(
            f"the client sent nothing for {session.ctx.timeout:g}s after {session.feedbacks} feedbacks"
        )
    return session.stopped(
        f"the client closed the connection (code {problem.code}) after {session.feedbacks} feedbacks, "
        "before the server ended the run"
    )


async def refuse_late(accepted: Accepted[object]) -> None:
    """Close a connection that came after the run ended, the way the ended run would."""
    connection = accepted.connection
    close = getattr(connection, "close", None)
    if close is not None:
        try:
            await close(1001, STOP_REASON)
        except Exception:
            pass
    accepted.released.set()


async def judge_no_reconnect(ctx: Ctx) -> None:
    """After a stop, a client should exit: a connection within the window is a reconnect."""
    try:
        late = await ctx.listener.accept(ctx.options.reconnect_window)
    except NoReply:
        record(ctx.report, judging.reconnect_after_stop(None, ctx.options.reconnect_window))
        return
    record(ctx.report, judging.reconnect_after_stop(late.peer, ctx.options.reconnect_window))
    await refuse_late(late)
