from __future__ import annotations

from checks.errors import NoReply, PeerClosed
from checks.listen import accept_client
from checks.plugrl_client import judging
from checks.plugrl_client.drive import ended_early
from checks.plugrl_client.options import Ctx
from checks.plugrl_client.session import Session

TRACEBACK = 'Traceback (most recent call last):\n  File "server.py", line 1, in <module>\nRuntimeError: boom\n'


async def text_phase(ctx: Ctx) -> None:
    """The first infer is answered by a text frame: the client must close and send nothing more."""
    session = Session(ctx, await accept_client(ctx, "text"), reuse_offered=False, reconnected=False)
    try:
        await session.open(padded=False)
        await session.infer()
        await session.send(TRACEBACK, "a text frame (a traceback)")
    except (PeerClosed, NoReply) as problem:
        raise ended_early(session, problem) from None
    try:
        data = await session.recv(ctx.timeout)
    except PeerClosed:
        closed, what = True, "closed after the text frame"
    except NoReply:
        closed, what = False, f"still open {ctx.timeout:g}s after the text frame"
    else:
        closed, what = False, f"went on and sent a {len(data)}-byte frame"
    session.record([judging.after_text_frame(closed, what)])
    await session.close("")
