"""Reading one reply and judging its frame and body, the clauses every server frame decides."""

from __future__ import annotations

from typing import Any

from checks.core import NoReply, PhaseStopped, truncate
from checks.rllink.codec import BodyError, CodecError, NotAMessage, PickleRefused, Undecodable, sniff_dialect
from checks.rllink.link import Closed, Link
from checks.rllink.options import Ctx

REPLY_TYPES = ("PONG", "SET_CONFIG", "SET_STATE")


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
        report.failed(clause, expected=f"{want} within {wait:g}s", actual="nothing arrived", evidence=link.transcript)
        raise PhaseStopped(f"no {want} arrived", link.transcript) from None
    except Closed as closed:
        report.failed(clause, expected=want, actual=f"the connection ended ({closed.how})", evidence=link.transcript)
        raise PhaseStopped(f"the server closed instead of sending {want}", link.transcript) from None
    except PickleRefused as exc:
        report.failed(
            "rllink.body.form",
            expected="msgpack-numpy arrays of plain dtypes",
            actual=f"{exc} (never unpickled)",
            evidence=link.transcript,
        )
        raise PhaseStopped(f"the {want} carried a pickled array", link.transcript) from None
    except CodecError as exc:
        record_frame_fault(ctx, exc, link)
        raise PhaseStopped(f"the reply did not decode: {truncate(str(exc), 120)}", link.transcript) from None
    report.passed("rllink.frame.header", actual=f"header {got.header.decode()}", evidence=link.transcript)
    if message["type"] not in REPLY_TYPES:
        report.failed(
            "rllink.body.form",
            expected=f"type one of {', '.join(REPLY_TYPES)}",
            actual=f"type {truncate(message['type'], 40)!r}",
            evidence=link.transcript,
        )
        raise PhaseStopped("the reply's type is not a reply type", link.transcript)
    report.passed("rllink.body.form", actual=f"a map of type {message['type']}", evidence=link.transcript)
    if message["type"] != want:
        report.failed(
            overtaken or clause, expected=want, actual=f"{message['type']} came instead", evidence=link.transcript
        )
        raise PhaseStopped(f"{message['type']} came instead of {want}", link.transcript)
    return message


def record_frame_fault(ctx: Ctx, exc: CodecError, link: Link) -> None:
    """A reply that did not decode: the header, the body's form, or a slip between them."""
    dialect = ctx.state.dialect
    if isinstance(exc, NotAMessage):
        ctx.report.failed(
            "rllink.body.form", expected="a map with a str `type`", actual=str(exc), evidence=link.transcript
        )
    elif isinstance(exc, Undecodable) and exc.args and _other_dialect(exc, link) not in (None, dialect):
        ctx.report.failed(
            "rllink.body.form",
            expected=f"a {dialect} body",
            actual=f"a {_other_dialect(exc, link)} body: {exc}",
            evidence=link.transcript,
        )
    elif isinstance(exc, BodyError):
        ctx.report.failed(
            "rllink.frame.header",
            expected="a body of exactly the announced length that decodes completely",
            actual=str(exc),
            evidence=link.transcript,
        )
    else:
        ctx.report.failed("rllink.frame.header", expected="8 ASCII digits", actual=str(exc), evidence=link.transcript)


def _other_dialect(exc: CodecError, link: Link) -> str | None:
    body = getattr(exc, "body", b"")
    return sniff_dialect(body) if isinstance(body, bytes) and body else None
