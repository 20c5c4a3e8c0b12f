"""The judges of what one phase of the plugrl-server suite observes: a compression offer, a pause,
an integer reuse mask, the wait for an owed feedback, the run's stop.

Pure functions, as in `checks.plugrl.judging`: an observation in, decisions out.
"""

from __future__ import annotations

from checks.decision import Decision, Judged, check, missed, passed, unsupported
from checks.errors import NoReply, PeerClosed, Refused
from checks.plugrl.judging import describe_close, is_close, seconds
from checks.plugrl.protocol import FEEDBACK_TIMEOUT_REASON, RESYNC_REASON, REUSE_FEATURE, STOP_REASON

ACCEPTS_AFTER_ERROR = "plugrl.7.2.accepts-after-error"
# What the feature makes a server do; unsupported when it is not listed.
REUSE_CLAUSES = (
    "plugrl.10.1.reuse-answered",
    "plugrl.10.1.reuse-all-rows",
    "plugrl.10.1.reuse-rows",
    "plugrl.10.1.reuse-connection-scoped",
    "plugrl.10.1.reuse-unknown-env",
    "plugrl.10.1.reuse-after-terminal",
    "plugrl.10.1.reuse-malformed",
    "plugrl.10.1.reuse-integer-mask",
    "plugrl.10.1.reuse-integer-mask-handled",
)
OFFERED, UNOFFERED = "plugrl.10.1.reuse-offered", "plugrl.10.1.reuse-unoffered"


def no_connection_after_error(what: str, problem: str) -> Decision:
    """A new connection after a malformed input on another did not get its metadata."""
    return missed(
        ACCEPTS_AFTER_ERROR, expected=f"a new connection after {what}, with metadata", actual=f"it failed: {problem}"
    )


def reuse_offer(offered: bool) -> list[Decision]:
    """Whether the metadata lists reuse-feedback-obs: what the feature's clauses are, before any reuse."""
    if not offered:
        why = f"the metadata does not list {REUSE_FEATURE}"
        return [unsupported(clause, why) for clause in (OFFERED, *REUSE_CLAUSES)]
    return [
        passed(OFFERED, actual=f"features lists {REUSE_FEATURE}"),
        unsupported(UNOFFERED, f"the metadata lists {REUSE_FEATURE}"),
    ]


def compression(extensions: list[str] | Refused) -> Decision:
    """A client offered permessage-deflate: the negotiated extensions, or the refused handshake."""
    if isinstance(extensions, Refused):
        # Refusing a client that offers compression never negotiates it either.
        return passed(
            "plugrl.1.1.no-compression",
            expected="the offer declined",
            actual=f"the handshake was refused: {extensions}",
        )
    return check(
        "permessage-deflate" not in extensions,
        "plugrl.1.1.no-compression",
        expected="the offer declined",
        actual=f"negotiated extensions: {extensions or 'none'}",
    )


def integer_mask(outcome: PeerClosed | NoReply | tuple[str, str]) -> list[Decision]:
    """The answer to a reuse sent as a 0/1 integer mask: an action or a resync both handle it.

    `outcome` is the close, the silence, or the kind and summary of the frame that came.
    """
    handled = False
    if isinstance(outcome, NoReply):
        shown = f"neither answered nor refused: nothing arrived within {seconds(outcome)}"
    elif isinstance(outcome, PeerClosed):
        handled = is_close(outcome, RESYNC_REASON)
        how = "refused" if handled else "neither answered nor refused with a resync"
        shown = f"{how}: {describe_close(outcome)}"
    else:
        kind, frame_shown = outcome
        handled = kind == "action"
        shown = "accepted: answered with an action" if handled else f"answered with {frame_shown}"
    expected = "an action (accepted) or a close 1001 plugrl-server-resync (refused)"
    return [
        Decision("plugrl.10.1.reuse-integer-mask", "info", expected, shown),
        check(handled, "plugrl.10.1.reuse-integer-mask-handled", expected=expected, actual=shown),
    ]


def late_feedback_pause(pause: float, outcome: PeerClosed | NoReply | tuple[str, str]) -> Decision | None:
    """What came while the client paused `pause` seconds before its feedback: nothing is right (None:
    nothing decided yet), a close or a frame (`(kind, summary)`) fails the late feedback."""
    if isinstance(outcome, NoReply):
        return None  # the quiet we wanted: nothing was due
    if isinstance(outcome, PeerClosed):
        return missed(
            "plugrl.7.3.late-feedback",
            expected=f"the connection open through a {pause:g}s pause",
            actual=f"closed during it: {outcome}",
        )
    kind, shown = outcome
    return missed(
        "plugrl.7.3.late-feedback",
        expected="nothing from the server while the client steps",
        actual=f"a {kind} frame: {shown}",
    )


def stop_close(outcome: PeerClosed | NoReply | None, exchanges: int, max_exchanges: int) -> Decision:
    """How an exchange ended that should end with the server's stop (None: it had not ended)."""
    if isinstance(outcome, PeerClosed):
        return check(
            is_close(outcome, STOP_REASON),
            "plugrl.7.1.stop-close",
            expected=f"close 1001 {STOP_REASON!r}",
            actual=f"after {exchanges} exchanges, {outcome}",
        )
    if isinstance(outcome, NoReply):
        return missed(
            "plugrl.7.1.stop-close",
            expected="an answer or the stop",
            actual=f"nothing arrived within {seconds(outcome)}",
        )
    return missed(
        "plugrl.7.1.stop-close",
        expected=f"the stop within max_exchanges = {max_exchanges}",
        actual="the server was still answering",
    )


# The server's clock starts when it sends the action and the checker's when it reads it, so a
# server that waits exactly the declared time is seen closing a little sooner; 10% covers that.
EARLY_CLOSE_SHARE = 0.9
WAIT = "plugrl.7.3.feedback-wait"
ENFORCED = "plugrl.7.3.feedback-timeout-enforced"
TIMEOUT_CLOSE = "plugrl.7.3.feedback-timeout-close"


def frame_during_wait(kind: str, shown: str) -> Decision:
    """A frame arrived while the server waited for a feedback it was owed."""
    return missed(
        WAIT, expected="nothing from the server while it waits for a feedback", actual=f"a {kind} frame: {shown}"
    )


def never_closed(allowed: float, declared: float, step: float) -> list[Decision]:
    """The server kept a connection owing a feedback open for all of `allowed` seconds."""
    return [
        passed(WAIT, actual=f"open for all of {allowed:g}s"),
        missed(
            ENFORCED,
            expected=f"a close within {declared:g}s (feedback_timeout) + {step:g}s (timeout)",
            actual=f"still open after {allowed:g}s without a feedback",
        ),
        unsupported(TIMEOUT_CLOSE, f"the server did not close the connection within {allowed:g}s"),
    ]


def closed_while_owed(closed: PeerClosed, elapsed: float, declared: float, step: float) -> Judged[None]:
    """A connection owing a feedback closed `elapsed` seconds after its action: how long it was
    kept (against `declared`, the feedback timeout), and how it was closed."""
    how = f"after {elapsed:.2f}s {describe_close(closed)}"
    if closed.by == "checker":  # it refused what the server sent during the wait (frame_cap, bad frame)
        decision = missed(WAIT, expected="nothing from the server while it waits for a feedback", actual=how)
        return Judged(None, [decision], "the checker closed the connection")
    return Judged(
        None,
        [
            check(
                elapsed >= EARLY_CLOSE_SHARE * declared,
                WAIT,
                expected=f"open for at least {EARLY_CLOSE_SHARE * declared:g}s of the {declared:g}s feedback timeout",
                actual=how,
            ),
            passed(ENFORCED, expected=f"a close within {declared + step:g}s", actual=how),
            check(
                is_close(closed, FEEDBACK_TIMEOUT_REASON),
                TIMEOUT_CLOSE,
                expected=f"close 1001 {FEEDBACK_TIMEOUT_REASON!r}",
                actual=how,
            ),
        ],
    )
