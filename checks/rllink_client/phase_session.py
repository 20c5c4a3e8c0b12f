from __future__ import annotations

from checks.decision import record
from checks.rllink_client import judging
from checks.rllink_client.drive import serve, start_session
from checks.rllink_client.options import Ctx


async def session_phase(ctx: Ctx) -> None:
    """The client's handshake and `batches` on-policy batches, each answered with freshly trained weights."""
    conv, first = await start_session(ctx, "session")
    await serve(conv, first, ctx.options.batches)
    record(ctx.report, judging.session_ended(conv.bare_episodes > 0, conv.dialect))
