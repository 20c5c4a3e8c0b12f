"""The second-client phase: a second connection while the first is served is refused or served, never left
hanging; after the first leaves, a new client is served."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.errors import Malformed, NoReply, PeerClosed, Refused
from checks.rllink import judging
from checks.rllink.options import Ctx
from checks.rllink.replies import expect_reply
from checks.rllink.session import connect, drop_link, fresh_link, ping, shared_link


async def second_client_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    dialect = ctx.state.dialect
    assert dialect is not None
    first = await shared_link(ctx, "first client")
    try:
        second = await connect(ctx, "second client", window=0.0)
    except Refused:
        seen = "refused"
    else:
        try:
            seen = "served" if await ping(second, dialect, options.second_client_wait) else "answered wrongly"
        except NoReply:
            seen = "hanging"
        except (PeerClosed, Malformed):
            seen = "refused"
        finally:
            await second.close()
    left = judging.second_client(seen, options.second_client_wait)
    if left is not None:
        record(report, left)
    await first.send({"type": "PING"}, dialect)
    await expect_reply(ctx, first, "PONG", "rllink.ping.pong")
    await drop_link(ctx)
    try:
        ctx.state.link = await fresh_link(ctx, "after the first client left", dialect)
    except (Refused, NoReply, PeerClosed, Malformed) as exc:
        record(report, judging.served_after_first_left(seen, str(exc)))
        raise PhaseStopped("no client is served after the first left") from None
    record(report, judging.served_after_first_left(seen, None), ctx.state.link.transcript)
