"""Opening connections to an RLlink server and telling its liveness apart.

RLlib serves one client per listener and, whenever a connection ends, closes
its listening socket for about five seconds before it listens again. So a
fresh connection is retried while it is refused (or reset while still in
the old listener's backlog) for up to `recycle_wait` plus a timeout, and the
first exchange on it is a PING.
"""

from __future__ import annotations

import asyncio
from typing import Literal
from urllib.parse import urlsplit

from checks.core import PhaseStopped
from checks.errors import Malformed, NoReply, PeerClosed, Refused
from checks.rllink.codec import Dialect
from checks.rllink.link import Link
from checks.rllink.options import Ctx

Liveness = Literal["recovered", "wedged", "died"]
RETRY_PAUSE = 0.1  # the longest pause between connection attempts
FIRST_PAUSE = 0.01  # the shortest: a quick recycle is seen within about this much of its end


def retry_pause(waited: float) -> float:
    """The pause before the next connection attempt: a tenth of the time already waited, within
    FIRST_PAUSE..RETRY_PAUSE, so a recycle's end is seen soon after it and a long one costs few attempts."""
    return min(RETRY_PAUSE, max(FIRST_PAUSE, waited / 10))


def address(ctx: Ctx) -> tuple[str, int]:
    parts = urlsplit(ctx.url)
    return parts.hostname or "127.0.0.1", parts.port or 0


async def connect(ctx: Ctx, label: str, window: float | None = None) -> Link:
    """A new connection, retried while refused for `window` seconds (default: the recycle back-off)."""
    host, port = address(ctx)
    options = ctx.options
    transcript = ctx.report.transcript(label)
    loop = asyncio.get_running_loop()
    started = loop.time()
    end = started + (options.recycle_wait + ctx.timeout if window is None else window)
    while True:
        try:
            return await Link.open(host, port, transcript, ctx.timeout, options.frame_cap)
        except Refused:
            if loop.time() >= end:
                raise
            await asyncio.sleep(retry_pause(loop.time() - started))


async def ping(link: Link, dialect: Dialect, timeout: float) -> bool:
    """True when a PING on `link` gets a PONG as the next frame within `timeout`."""
    await link.send({"type": "PING"}, dialect)
    _, message = await link.read_message(dialect, timeout)
    return bool(message["type"] == "PONG")


async def fresh_link(ctx: Ctx, label: str, dialect: Dialect) -> Link:
    """A connection whose opening PING got its PONG, retried through a recycle.

    Raises Refused (still refused at the end of the window), NoReply (connected,
    but the PING was never answered) or PeerClosed/Malformed when the answer is wrong.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    end = started + ctx.options.recycle_wait + ctx.timeout
    while True:
        link = await connect(ctx, label, window=max(end - loop.time(), 0.0))
        try:
            if await ping(link, dialect, ctx.timeout):
                return link
            await link.close()
            raise PeerClosed(by="checker", reason="the opening PING was answered with another message")
        except PeerClosed:
            # Reset from the old listener's backlog while the server recycles: try again.
            await link.close()
            if loop.time() >= end:
                raise
            await asyncio.sleep(retry_pause(loop.time() - started))
        except (NoReply, Malformed):
            await link.close()
            raise


async def liveness(ctx: Ctx, label: str, dialect: Dialect) -> tuple[Liveness, Link | None, str]:
    """After the back-off, a fresh connection's PING: recovered (with the open link), wedged or died.

    The server is owed its back-off (`recycle_wait`) before anything counts against it, but a PONG
    that comes during it ends the wait: only that is decided early. Whatever else happens in the
    back-off (refused, reset, no PONG) is tried again, and after it the judged attempt is the one
    it always was, with the same deadlines.
    """
    loop = asyncio.get_running_loop()
    back_off_end = loop.time() + ctx.options.recycle_wait
    early = await _pong_in_back_off(ctx, label, dialect, back_off_end)
    if early is not None:
        return "recovered", early, "a fresh connection's PING got its PONG"
    await asyncio.sleep(max(back_off_end - loop.time(), 0.0))
    try:
        link = await fresh_link(ctx, label, dialect)
    except Refused as exc:
        return "died", None, f"connections still refused {ctx.options.recycle_wait + ctx.timeout:g}s later ({exc})"
    except NoReply:
        return (
            "wedged",
            None,
            f"a fresh connection's PING got no PONG within {ctx.timeout:g}s: port open, nothing answers",
        )
    except (PeerClosed, Malformed) as exc:
        return "wedged", None, f"a fresh connection's PING was not answered with a PONG: {exc}"
    return "recovered", link, "a fresh connection's PING got its PONG"


async def _pong_in_back_off(ctx: Ctx, label: str, dialect: Dialect, end: float) -> Link | None:
    """A connection whose PING got its PONG before `end`, or None; nothing else is decided here.

    Each PING waits at most `quiet`: a connection made while the server recycles may sit in a
    listener that is going away, and is closed and tried again rather than waited on.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    while (left := end - loop.time()) > 0:
        try:
            link = await connect(ctx, label, window=left)
        except (Refused, NoReply):
            return None
        try:
            if await ping(link, dialect, max(min(ctx.options.quiet, end - loop.time()), FIRST_PAUSE)):
                return link
        except (NoReply, PeerClosed, Malformed):
            pass
        await link.close()
        await asyncio.sleep(retry_pause(loop.time() - started))
    return None


async def drop_link(ctx: Ctx) -> None:
    if ctx.state.link is not None:
        await ctx.state.link.close()
        ctx.state.link = None


async def shared_link(ctx: Ctx, label: str) -> Link:
    """The run's open connection, or a fresh one (opening PING answered) when there is none.

    No such connection stops the phase: what made the server stop answering was judged where it happened.
    """
    assert ctx.state.dialect is not None
    if ctx.state.link is None:
        try:
            ctx.state.link = await fresh_link(ctx, label, ctx.state.dialect)
        except (Refused, NoReply, PeerClosed, Malformed) as exc:
            raise PhaseStopped(f"no fresh connection was served ({type(exc).__name__}: {exc})") from None
    return ctx.state.link


async def after_bad_input(ctx: Ctx, link: Link, label: str, *, answered: bool = False) -> tuple[str, Link | None, str]:
    """What became of the server after a bad frame on `link` (which is closed or handed back).

    Outcomes: "closed and recovered" or "kept answering" (with the link to go on with),
    "hung" (the connection stays open but mute), "wedged" or "died".
    `answered`: the bad input got its reply, so the server is not waited on to close: a close that
    has not already come is seen on the next PING instead, with the same outcome.
    """
    dialect = ctx.state.dialect
    assert dialect is not None
    how = await link.closes_within(FIRST_PAUSE if answered else max(ctx.options.quiet * 2, 0.2))
    if how is None:
        try:
            if await ping(link, dialect, ctx.timeout):
                return "kept answering", link, "the connection stayed open and the next PING got its PONG"
            detail = "the next PING was answered with another message"
        except NoReply:
            await link.close()
            return "hung", None, f"the connection stayed open and a PING got no answer within {ctx.timeout:g}s"
        except (PeerClosed, Malformed) as exc:
            detail = f"the server closed on the next PING ({exc})"
        await link.close()
    else:
        detail = f"the server closed the connection ({how})"
        await link.close()
    state, fresh, found = await liveness(ctx, label, dialect)
    if state == "recovered":
        return "closed and recovered", fresh, f"{detail}; {found}"
    return state, None, f"{detail}; {found}"
