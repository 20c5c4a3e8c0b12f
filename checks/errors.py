"""The one error family of `checks/`: what a transport or a phase raises, with its data as fields.

In the manner of h11 and httpx: one base class, a few leaves that say what happened on
the wire, each built from keyword fields rather than patched with attributes afterwards.
Transports raise `PeerClosed`, `NoReply`, `Refused` and `Malformed`; phases raise
`PhaseStopped` (which `run_suite` turns into "not exercised" for the phase's undecided
clauses) and its `TargetUnreachable` leaf (which stops the whole run).
"""

from __future__ import annotations

from typing import Any, Literal

from checks.evidence import Evidence, truncate

# Who ended a connection: the peer under test, the checker itself (for example a 1009
# after an oversized frame), or neither (a reset, EOF without a close frame).
Closer = Literal["peer", "checker", "network"]


class CheckError(Exception):
    """Base of every error `checks/` raises on purpose."""


class PeerClosed(CheckError):
    """The connection ended. `by` says who ended it; `code` and `reason` are the close
    code and reason where the transport has them (WebSocket, gRPC status), else None and ""."""

    def __init__(self, *, by: Closer, code: int | None = None, reason: str = "") -> None:
        detail = f" with code {code}" if code is not None else ""
        if reason:
            detail += f", reason {truncate(reason, 80)!r}"
        super().__init__(f"closed by the {by}{detail}" if by != "network" else f"the connection ended{detail}")
        self.by: Closer = by
        self.code = code
        self.reason = reason


class NoReply(CheckError):
    """Nothing (or not enough) arrived before the deadline; `timeout` is that deadline in seconds."""

    def __init__(self, message: str = "nothing arrived before the deadline", timeout: float | None = None) -> None:
        super().__init__(message)
        self.timeout = timeout


class Refused(CheckError):
    """The peer refused the connection or the handshake (TCP refused, WebSocket upgrade
    refused, a 4xx on the handshake). `status` is the handshake's HTTP status where there was one."""

    def __init__(self, reason: str, *, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


class Malformed(CheckError):
    """Bytes arrived that cannot be read as the protocol's message; `data` holds the offending
    bytes (cut to what evidence may keep) and `reason` says what is wrong with them."""

    def __init__(self, reason: str, *, data: bytes = b"", detail: Any = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.data = data
        self.detail = detail


class PhaseStopped(CheckError):
    """The current phase cannot go on: the one way a phase stops early.

    Whatever the stop itself proves is recorded before raising; `run_suite`
    then records every clause of the phase still undecided as `error`
    ("not exercised: <reason>"), with `evidence` attached.
    """

    def __init__(self, reason: str, evidence: Evidence = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.evidence: Evidence = evidence


class TargetUnreachable(PhaseStopped):
    """The harness could not reach the target at all (refused, no route, bad address).

    It stops the run, not only the phase: later phases are `error` too.
    """
