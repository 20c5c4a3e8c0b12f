from __future__ import annotations

import asyncio

from checks.core import NoReply
from checks.decision import record
from checks.listen import TcpListener
from checks.rllink_client import judging
from checks.rllink_client.conversation import Conversation
from checks.rllink_client.drive import open_conversation, serve, start_session
from checks.rllink_client.options import Ctx


async def reconnect_phase(ctx: Ctx) -> None:
    """The server ends the session and stops listening for `recycle` s: does the client come back, handshake first?"""
    if not ctx.state.held:
        conv, first = await start_session(ctx, "reconnect")
        await serve(conv, first, 1)
    listener = ctx.listener
    assert isinstance(listener, TcpListener), "rllink-client listens on TCP (its suite's listener)"
    await listener.stop_listening()  # first, so an instant reconnect is refused as RLlib refuses it
    for held in ctx.state.held:
        await held.close()
    ctx.state.held.clear()
    await asyncio.sleep(ctx.options.recycle)
    await listener.listen_again()
    try:
        accepted = await listener.accept(ctx.options.reconnect_window)
    except NoReply:
        record(ctx.report, judging.reconnect(None, ctx.options.reconnect_window, ctx.options.recycle))
        return
    record(ctx.report, judging.reconnect(accepted.peer, ctx.options.reconnect_window, ctx.options.recycle))
    again = Conversation(ctx, accepted)
    ctx.state.held.append(again)
    await serve(again, await open_conversation(again), 1)
    record(ctx.report, judging.served_again())
