"""The handshake phase: the seed client's opening (PING, GET_CONFIG, GET_STATE), dialect detection,
then the same requests pipelined. The connection stays open for the next phases."""

from __future__ import annotations

import asyncio

from checks.core import PhaseStopped, TargetUnreachable
from checks.decision import record
from checks.errors import NoReply, PeerClosed, Refused
from checks.rllink import judging
from checks.rllink.codec import BodyError, Dialect, HeaderError, decode_body, encode, sniff_dialect
from checks.rllink.link import Frame, Link
from checks.rllink.options import Ctx
from checks.rllink.replies import expect_reply, record_frame_fault
from checks.rllink.session import RETRY_PAUSE, connect, drop_link
from checks.rllink.state_reply import judge_state


async def handshake_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    link = await _first_pong(ctx)
    ctx.state.link = link
    try:
        extra = await link.silent_for(options.quiet)
    except PeerClosed as closed:
        await drop_link(ctx)
        raise PhaseStopped(
            f"the server closed the connection after its PONG ({closed.reason})", link.transcript
        ) from None
    more = judging.ping_alone(extra, options.quiet)
    if more is not None:
        record(report, more, link.transcript)
        await drop_link(ctx)
        raise PhaseStopped("more than one reply to a PING; the stream is out of step", link.transcript)
    dialect = ctx.state.dialect
    assert dialect is not None

    await link.send({"type": "GET_CONFIG"}, dialect)
    config = await expect_reply(ctx, link, "SET_CONFIG", "rllink.config.set-config")
    _judge_config(ctx, config, link)

    await link.send({"type": "GET_STATE"}, dialect)
    state = await expect_reply(ctx, link, "SET_STATE", "rllink.state.shape")
    judge_state(ctx, state, link)

    # Pipelined: three requests in one write, replies in request order.
    await link.send_raw(
        b"".join(_frame(kind, dialect) for kind in ("GET_STATE", "PING", "GET_CONFIG")), "GET_STATE, PING, GET_CONFIG"
    )
    order = "rllink.order.pipelined"
    judge_state(ctx, await expect_reply(ctx, link, "SET_STATE", order), link)
    await expect_reply(ctx, link, "PONG", order)
    await expect_reply(ctx, link, "SET_CONFIG", order)
    record(report, judging.replies_in_order("SET_STATE, PONG, SET_CONFIG"), link.transcript)

    await link.send({"type": "PING"}, dialect)
    await expect_reply(ctx, link, "PONG", "rllink.ping.pong")
    record(report, judging.pong_after("GET_STATE"), link.transcript)


def _frame(kind: str, dialect: Dialect) -> bytes:
    return encode({"type": kind}, dialect)


async def _first_pong(ctx: Ctx) -> Link:
    """Connect, PING, and learn the dialect from the reply.

    auto: msgpack first (Ray 2.49 on); a json server closes on it and stops listening while it recycles,
    so the json PING goes out as soon as it listens again, rather than after a fixed back-off.
    """
    tried: list[Dialect] = ["msgpack", "json"] if ctx.options.dialect == "auto" else [ctx.options.dialect]
    loop = asyncio.get_running_loop()
    retry_until = 0.0
    attempt = 0
    while True:
        dialect = tried[attempt]
        window = None if attempt == 0 else max(retry_until - loop.time(), 0.0)
        link, got, closed = await _ping_once(ctx, dialect, window)
        if got is not None:
            return await _judge_first_reply(ctx, link, got, dialect)
        await link.close()
        if attempt == 0 and len(tried) > 1:
            attempt, retry_until = 1, loop.time() + ctx.options.recycle_wait + ctx.timeout
        elif attempt > 0 and loop.time() < retry_until:
            # Reset from the old listener's backlog while the server recycles: try again.
            await asyncio.sleep(RETRY_PAUSE)
        else:
            record(ctx.report, judging.opening_unanswered(ctx.timeout, closed), link.transcript)
            raise TargetUnreachable("every opening PING was answered by a close", link.transcript)


async def _ping_once(ctx: Ctx, dialect: Dialect, window: float | None) -> tuple[Link, Frame | None, str]:
    """A new connection's PING and the frame that answered it, or (None, how) when the server closed instead.

    Refused, silent or a malformed header: the target is unreachable or the phase stops.
    """
    try:
        link = await connect(ctx, f"opening PING ({dialect})", window=window)
    except (Refused, NoReply) as exc:
        raise TargetUnreachable(str(exc)) from None
    await link.send({"type": "PING"}, dialect)
    try:
        return link, await link.read_frame(), ""
    except NoReply:
        record(ctx.report, judging.opening_unanswered(ctx.timeout, None), link.transcript)
        await link.close()
        raise TargetUnreachable("the port is open but nothing answers", link.transcript) from None
    except PeerClosed as closed:
        return link, None, closed.reason
    except HeaderError as exc:
        ctx.state.dialect = dialect
        record_frame_fault(ctx, exc, link)
        await link.close()
        raise PhaseStopped("the PONG's frame is malformed", link.transcript) from None


async def _judge_first_reply(ctx: Ctx, link: Link, got: Frame, tried: Dialect) -> Link:
    """The dialect the reply is in, and whether it is the PONG (else the phase stops)."""
    ctx.state.dialect = (sniff_dialect(got.body) if ctx.options.dialect == "auto" else None) or tried
    try:
        message = decode_body(got.body, ctx.state.dialect)
    except BodyError as exc:
        link.transcript.received("binary", len(got.body), f"<undecodable: {exc}>")
        record_frame_fault(ctx, exc, link)
        await link.close()
        raise PhaseStopped("the PONG did not decode", link.transcript) from None
    link.transcript.received("binary", len(got.body) + 8, f"{message['type']} ({ctx.state.dialect} dialect)")
    record(ctx.report, judging.header_held(got.header), link.transcript)
    decisions = judging.opening_reply(message["type"], ctx.state.dialect)
    record(ctx.report, decisions, link.transcript)
    if judging.misses(decisions):
        await link.close()
        raise PhaseStopped("the PING was not answered with PONG", link.transcript)
    return link


def _judge_config(ctx: Ctx, message: dict[str, object], link: Link) -> None:
    """Record the SET_CONFIG's clauses; learn the fragment length (the option wins over what the server says)."""
    options, state = ctx.options, ctx.state
    assert state.dialect is not None
    judged = judging.config(message, state.dialect)
    known = state.fragment_length is not None  # then the pickle need not be read for it
    record(
        ctx.report,
        [d for d in judged.decisions if not (known and d.clause_id == "rllink.config.pickle")],
        link.transcript,
    )
    if judged.fragment_length is not None and not known:
        # A msgpack pickle's reading yields to the option; json's env_steps_per_sample is set, then overridden below.
        if state.dialect == "json" or options.fragment_length is None:
            state.fragment_length, state.fragment_source = judged.fragment_length, judged.fragment_source
    if options.fragment_length is not None:
        state.fragment_length, state.fragment_source = options.fragment_length, "the fragment_length option"
