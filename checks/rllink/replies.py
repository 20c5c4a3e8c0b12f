"""Reading one reply and recording what the judges decide about its frame and body."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped, truncate
from checks.decision import record
from checks.errors import Malformed, NoReply, PeerClosed
from checks.rllink import judging
from checks.rllink.codec import PickleRefused
from checks.rllink.link import Link
from checks.rllink.options import Ctx


async def expect_reply(
    ctx: Ctx, link: Link, want: str, clause: str, *, timeout: float | None = None, overtaken: str | None = None
) -> dict[str, Any]:
    """The next message, which must be `want`; a silence, close or other type fails `clause` and stops the phase.

    `overtaken`: the clause another reply type fails instead (a pipelined request's reply came first).
    A link whose expectation failed is out of step, so it stops being the run's shared link.
    """
    try:
        return await _expect(ctx, link, want, clause, timeout, overtaken)
    except PhaseStopped:
        if ctx.state.link is link:
            ctx.state.link = None
        await link.close()
        raise


async def _expect(
    ctx: Ctx, link: Link, want: str, clause: str, timeout: float | None, overtaken: str | None
) -> dict[str, Any]:
    report, dialect = ctx.report, ctx.state.dialect
    assert dialect is not None
    wait = ctx.timeout if timeout is None else timeout
    try:
        got, message = await link.read_message(dialect, wait)
    except NoReply:
        record(report, judging.no_reply(clause, want, wait, None), link.transcript)
        raise PhaseStopped(f"no {want} arrived", link.transcript) from None
    except PeerClosed as closed:
        record(report, judging.no_reply(clause, want, wait, closed.reason), link.transcript)
        raise PhaseStopped(f"the server closed instead of sending {want}", link.transcript) from None
    except PickleRefused as exc:
        record(report, judging.pickled_array(exc), link.transcript)
        raise PhaseStopped(f"the {want} carried a pickled array", link.transcript) from None
    except Malformed as exc:
        record_frame_fault(ctx, exc, link)
        raise PhaseStopped(f"the reply did not decode: {truncate(str(exc), 120)}", link.transcript) from None
    record(report, judging.header_held(got.header), link.transcript)
    decisions = judging.reply_type(message, want, clause, overtaken)
    record(report, decisions, link.transcript)
    if judging.misses(decisions):
        if message["type"] not in judging.REPLY_TYPES:
            raise PhaseStopped("the reply's type is not a reply type", link.transcript)
        raise PhaseStopped(f"{message['type']} came instead of {want}", link.transcript)
    return message


def record_frame_fault(ctx: Ctx, exc: Malformed, link: Link) -> None:
    """A reply that did not decode: the header, the body's form, or a slip between them."""
    record(ctx.report, judging.frame_fault(exc, ctx.state.dialect), link.transcript)
