"""The handshake phase: the seed client's opening (PING, GET_CONFIG, GET_STATE), dialect detection,
then the same requests pipelined. The connection stays open for the next phases."""

from __future__ import annotations

import asyncio

from checks.core import NoReply, PhaseStopped, TargetUnreachable
from checks.rllink.codec import CodecError, Dialect, decode_body, encode, sniff_dialect
from checks.rllink.link import Closed, Link, Refused
from checks.rllink.options import Ctx
from checks.rllink.pickle_scan import scan
from checks.rllink.replies import expect_reply, record_frame_fault
from checks.rllink.session import RETRY_PAUSE, connect, drop_link
from checks.rllink.state_reply import judge_state


async def handshake_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    link = await _first_pong(ctx)
    ctx.state.link = link
    try:
        extra = await link.silent_for(options.quiet)
    except Closed as closed:
        await drop_link(ctx)
        raise PhaseStopped(f"the server closed the connection after its PONG ({closed.how})", link.transcript) from None
    if extra is not None:
        report.failed(
            "rllink.ping.pong",
            expected=f"one PONG, then silence for {options.quiet:g}s",
            actual=f"more bytes: {extra!r}",
            evidence=link.transcript,
        )
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
    report.passed(order, actual="SET_STATE, PONG, SET_CONFIG in request order", evidence=link.transcript)

    await link.send({"type": "PING"}, dialect)
    await expect_reply(ctx, link, "PONG", "rllink.ping.pong")
    report.passed("rllink.ping.pong", actual="a PING after GET_STATE got its PONG", evidence=link.transcript)


def _frame(kind: str, dialect: Dialect) -> bytes:
    return encode({"type": kind}, dialect)


async def _first_pong(ctx: Ctx) -> Link:
    """Connect, PING, and learn the dialect from the reply.

    auto: msgpack first (Ray 2.49 on); a json server closes on it and stops listening while it recycles,
    so the json PING goes out as soon as it listens again, rather than after a fixed back-off.
    """
    report, options = ctx.report, ctx.options
    tried: list[Dialect] = ["msgpack", "json"] if options.dialect == "auto" else [options.dialect]
    loop = asyncio.get_running_loop()
    retry_until = 0.0
    attempt = 0
    while attempt < len(tried):
        dialect = tried[attempt]
        try:
            window = None if attempt == 0 else max(retry_until - loop.time(), 0.0)
            link = await connect(ctx, f"opening PING ({dialect})", window=window)
        except (Refused, NoReply) as exc:
            raise TargetUnreachable(str(exc)) from None
        await link.send({"type": "PING"}, dialect)
        try:
            got = await link.read_frame()
        except NoReply:
            report.failed(
                "rllink.listen.accepts",
                expected=f"a PONG within {ctx.timeout:g}s",
                actual="connected, but nothing answered the PING",
                evidence=link.transcript,
            )
            await link.close()
            raise TargetUnreachable("the port is open but nothing answers", link.transcript) from None
        except Closed as closed:
            await link.close()
            if attempt == 0 and len(tried) > 1:
                attempt, retry_until = 1, loop.time() + options.recycle_wait + ctx.timeout
                continue
            if attempt > 0 and loop.time() < retry_until:
                # Reset from the old listener's backlog while the server recycles: try again.
                await asyncio.sleep(RETRY_PAUSE)
                continue
            report.failed(
                "rllink.listen.accepts",
                expected="a PONG",
                actual=f"the server closed the connection ({closed.how})",
                evidence=link.transcript,
            )
            raise TargetUnreachable("every opening PING was answered by a close", link.transcript) from None
        except CodecError as exc:
            ctx.state.dialect = dialect
            record_frame_fault(ctx, exc, link)
            await link.close()
            raise PhaseStopped("the PONG's frame is malformed", link.transcript) from None
        ctx.state.dialect = (sniff_dialect(got.body) if options.dialect == "auto" else None) or dialect
        try:
            message = decode_body(got.body, ctx.state.dialect)
        except CodecError as exc:
            link.transcript.received("binary", len(got.body), f"<undecodable: {exc}>")
            exc.body = got.body  # type: ignore[attr-defined]
            record_frame_fault(ctx, exc, link)
            await link.close()
            raise PhaseStopped("the PONG did not decode", link.transcript) from None
        link.transcript.received("binary", len(got.body) + 8, f"{message['type']} ({ctx.state.dialect} dialect)")
        report.passed("rllink.frame.header", actual=f"header {got.header.decode()}", evidence=link.transcript)
        ok = message["type"] == "PONG"
        report.check(
            ok,
            "rllink.body.form" if message["type"] not in ("SET_CONFIG", "SET_STATE") else "rllink.ping.pong",
            expected="PONG",
            actual=f"type {message['type']!r}",
            evidence=link.transcript,
        )
        if not ok:
            await link.close()
            raise PhaseStopped("the PING was not answered with PONG", link.transcript)
        report.passed("rllink.listen.accepts", actual=f"PONG ({ctx.state.dialect} dialect)", evidence=link.transcript)
        report.passed("rllink.ping.pong", actual="PING answered with PONG", evidence=link.transcript)
        return link
    raise AssertionError("unreachable: every attempt returns or raises")


def _judge_config(ctx: Ctx, message: dict[str, object], link: Link) -> None:
    report, options, state = ctx.report, ctx.options, ctx.state
    clause = "rllink.config.set-config"
    if state.dialect == "json":
        steps, on_policy = message.get("env_steps_per_sample"), message.get("force_on_policy")
        ok = isinstance(steps, int) and not isinstance(steps, bool) and steps >= 1 and isinstance(on_policy, bool)
        report.check(
            ok,
            clause,
            expected="env_steps_per_sample an int >= 1, force_on_policy a bool",
            actual=f"env_steps_per_sample={steps!r}, force_on_policy={on_policy!r}",
            evidence=link.transcript,
        )
        if ok and state.fragment_length is None:
            assert isinstance(steps, int)
            state.fragment_length, state.fragment_source = steps, f"env_steps_per_sample = {steps} from SET_CONFIG"
    else:
        blob = message.get("config")
        report.check(
            isinstance(blob, bytes),
            clause,
            expected="`config` as bin",
            actual=f"`config` is {type(blob).__name__}",
            evidence=link.transcript,
        )
        if isinstance(blob, bytes) and state.fragment_length is None:
            facts = scan(blob)
            value, how = facts.fragment_length()
            report.info(
                "rllink.config.pickle",
                actual=f"a {facts.size}-byte pickle, {facts.opcodes} opcodes, classes named "
                f"{', '.join(facts.globals_named[:5]) or 'none'}; {how}",
                evidence=link.transcript,
            )
            if value is not None and options.fragment_length is None:
                state.fragment_length, state.fragment_source = value, how
    if options.fragment_length is not None:
        state.fragment_length, state.fragment_source = options.fragment_length, "the fragment_length option"
