"""The tolerance phase (informational): valid but unhandled type names, and headers only int() reads."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.errors import Malformed, NoReply, PeerClosed
from checks.rllink import judging
from checks.rllink.codec import encode
from checks.rllink.link import Link
from checks.rllink.options import Ctx
from checks.rllink.session import after_bad_input, shared_link


async def _pong_next(link: Link, ctx: Ctx) -> str:
    """What follows a PING on `link`: "PONG", another type, or how it failed."""
    dialect = ctx.state.dialect
    assert dialect is not None
    await link.send({"type": "PING"}, dialect)
    try:
        _, message = await link.read_message(dialect, ctx.timeout)
    except (NoReply, PeerClosed, Malformed) as exc:
        return f"{type(exc).__name__}: {exc}"
    return str(message["type"])


async def _recover(ctx: Ctx, link: Link, label: str) -> str:
    outcome, fresh, detail = await after_bad_input(ctx, link, label)
    ctx.state.link = fresh
    if fresh is None:
        raise PhaseStopped(f"the server is {outcome} after {label}", link.transcript)
    return f"{outcome}: {detail}"


async def tolerance_phase(ctx: Ctx) -> None:
    report = ctx.report
    dialect = ctx.state.dialect
    assert dialect is not None

    link = await shared_link(ctx, "ignored types")
    for kind in ("GET_ACTION", "PONG", "LOG_RETURNS"):
        await link.send({"type": kind}, dialect)
    after = await _pong_next(link, ctx)
    if after == "PONG":
        record(report, judging.types_ignored(after), link.transcript)
    else:
        ctx.state.link = None
        detail = await _recover(ctx, link, "unhandled types")
        record(report, judging.types_ignored(after, detail), link.transcript)

    body = encode({"type": "PING"}, dialect)[8:]
    seen = []
    digits = str(len(body)).zfill(7)
    for header in (f"{'+' + str(len(body)):>8}", f"{digits[:4]}_{digits[4:]}"):
        link = await shared_link(ctx, f"header {header!r}")
        ctx.state.link = None
        await link.send_raw(header.encode() + body, f"PING under header {header!r}")
        try:
            _, message = await link.read_message(dialect, ctx.timeout)
            answered = str(message["type"])
        except (NoReply, PeerClosed, Malformed) as exc:
            answered = f"{type(exc).__name__}"
        if answered == "PONG":
            ctx.state.link = link
            seen.append(f"{header!r} accepted")
        else:
            seen.append(f"{header!r} refused ({answered}; {await _recover(ctx, link, f'header {header!r}')})")
    record(report, judging.headers_lenient(seen))
