"""The RLlink tap: every server frame a real client gets, judged by the rllink suite's own judges
(`checks.rllink.judging`) against the client's request it answers.

A copy can decide each frame's header and body form, the reply type each request gets in order
(pipelined or not), a bare EPISODES getting no reply, the SET_CONFIG and SET_STATE forms, and
weights_seq_no never going down across the connections seen. What needs frames of the checker's
making (malformed and short input, the on-policy liveness probe, a second client, ignored types,
lenient headers, strict +1 batches) is `skip` "needs an active run".
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from checks.decision import Decision
from checks.errors import Malformed
from checks.rllink import judging
from checks.rllink.clauses import CATALOGUE
from checks.rllink.codec import HEADER_SIZE, Dialect, PickleRefused, decode_body, sniff_dialect, strict_length
from checks.rllink.options import RLlinkOptions
from checks.tap.copies import Copy
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec
from checks.tap.watcher import Connection, ConnectionWatcher

# The reply each reply-bearing request calls for, and the clause a wrong one misses.
ANSWERS = {
    "PING": ("PONG", "rllink.ping.pong"),
    "GET_CONFIG": ("SET_CONFIG", "rllink.config.set-config"),
    "GET_STATE": ("SET_STATE", "rllink.state.shape"),
    "EPISODES_AND_GET_STATE": ("SET_STATE", "rllink.state.shape"),
}
PASSIVE = frozenset(
    {
        "rllink.listen.accepts",
        "rllink.frame.header",
        "rllink.body.form",
        "rllink.ping.pong",
        "rllink.config.set-config",
        "rllink.config.pickle",
        "rllink.state.shape",
        "rllink.episodes.no-reply",
        "rllink.order.pipelined",
        "rllink.seq.monotonic",
    }
)
SERVER_CLAUSES = tuple(sorted(PASSIVE))


@dataclass
class Frame:
    header: bytes
    body: bytes

    @property
    def size(self) -> int:
        return HEADER_SIZE + len(self.body)


@dataclass
class BrokenHeader:
    """A header that is not 8 ASCII digits (or announces more than the cap): the stream is unreadable after it."""

    fault: Malformed
    size: int = 0


@dataclass
class FrameReader:
    """One direction's frames: an 8-digit header, then that many bytes of body."""

    cap: int
    broken: bool = False
    _buffer: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes | memoryview) -> list[Frame | BrokenHeader]:
        if self.broken:
            return []
        self._buffer += data
        found: list[Frame | BrokenHeader] = []
        while len(self._buffer) >= HEADER_SIZE:
            header = bytes(self._buffer[:HEADER_SIZE])
            try:
                length = strict_length(header, self.cap)
            except Malformed as exc:
                self.broken = True
                found.append(BrokenHeader(exc))
                return found
            if len(self._buffer) < HEADER_SIZE + length:
                return found
            found.append(Frame(header, bytes(self._buffer[HEADER_SIZE : HEADER_SIZE + length])))
            del self._buffer[: HEADER_SIZE + length]
        return found


@dataclass
class Link(Connection):
    """One connection as its frames show it."""

    # Reply-bearing requests not answered yet, in order, each with whether a bare EPISODES came just before it.
    pending: deque[tuple[str, bool]] = field(default_factory=deque)
    bare_episodes: bool = False  # a bare EPISODES came after the last reply-bearing request
    replies: int = 0


class RllinkWatcher(ConnectionWatcher[Link]):
    def __init__(self, options: RLlinkOptions) -> None:
        super().__init__()
        self.options = options
        self.dialect: Dialect | None = None if options.dialect == "auto" else options.dialect
        self.seqs: list[int] = []  # weights_seq_no in the order the traffic showed them, across connections

    def readers(self) -> tuple[FrameReader, FrameReader]:
        return FrameReader(self.options.frame_cap), FrameReader(self.options.frame_cap)

    def new_connection(self) -> Link:
        return Link()

    def copied(self, copy: Copy, link: Link, ledger: Ledger) -> None:
        item = copy.item
        if copy.sender == "client":
            self._request(copy.connection, link, item, ledger)
        elif isinstance(item, BrokenHeader):
            ledger.note(copy.connection, f"server: {item.fault}")
            ledger.decide(copy.connection, [judging.frame_fault(item.fault, self.dialect)])
        elif isinstance(item, Frame):
            ledger.judge(copy.connection, SERVER_CLAUSES, lambda: self._reply(link, item, copy.connection, ledger))

    def _request(self, connection: int, link: Link, item: Any, ledger: Ledger) -> None:
        if not isinstance(item, Frame):
            ledger.note(connection, f"client: {item.fault}; the rest of this connection is not judged")
            link.order_lost = True
            return
        self.dialect = self.dialect or sniff_dialect(item.body)
        try:
            kind = decode_body(item.body, self.dialect or "json")["type"]
        except Malformed as exc:
            ledger.note(connection, f"client: an undecodable frame ({exc}); replies are no longer matched")
            link.order_lost = True
            return
        ledger.note(connection, f"client: {kind} ({item.size} bytes)")
        if kind in ANSWERS:
            link.pending.append((kind, link.bare_episodes))
            link.bare_episodes = False
        elif kind == "EPISODES":
            link.bare_episodes = True

    def _reply(self, link: Link, frame: Frame, connection: int, ledger: Ledger) -> list[Decision]:
        dialect = self.dialect or sniff_dialect(frame.body) or "json"
        decisions = [judging.header_held(frame.header)]
        try:
            message = decode_body(frame.body, dialect)
        except Malformed as exc:
            if link.pending:  # a reply all the same: the next one answers the next request
                link.pending.popleft()
                link.replies += 1
            if isinstance(exc, PickleRefused):
                return [*decisions, judging.pickled_array(exc)]
            return [judging.frame_fault(exc, dialect)]
        kind = message["type"]
        ledger.note(connection, f"server: {kind} ({frame.size} bytes)")
        if link.order_lost or kind not in judging.REPLY_TYPES:
            return decisions + judging.reply_type(message, kind, "rllink.body.form") + self._content(message, dialect)
        wants = [ANSWERS[request][0] for request, _ in link.pending]
        if kind not in wants:
            after_bare_episodes = link.bare_episodes or bool(link.pending and link.pending[0][1])
            return [*decisions, judging.unasked(kind, after_bare_episodes)]
        at = wants.index(kind)
        request, after_episodes = link.pending[at]
        del link.pending[at]
        link.replies += 1
        decisions += judging.reply_type(message, kind, "rllink.body.form")
        if at:  # it overtook the replies due before it
            due = ANSWERS[link.pending[0][0]][0]
            decisions.append(judging.came_instead("rllink.order.pipelined", due, kind))
        elif len(wants) > 1:
            decisions.append(judging.replies_in_order(f"{kind} answering {request}"))
        if after_episodes:
            decisions.append(judging.episodes_unanswered(request, kind))
        if link.replies == 1 and request == "PING":
            decisions += judging.opening_reply(kind, dialect)
        elif kind == "PONG":
            decisions.append(judging.pong_after("the first reply"))
        return decisions + self._content(message, dialect)

    def _content(self, message: dict[str, Any], dialect: Dialect) -> list[Decision]:
        kind = message["type"]
        if kind == "SET_CONFIG":
            return judging.config(message, dialect).decisions
        if kind != "SET_STATE":
            return []
        judged = judging.state(message, dialect, self.options, self.seqs, "the SET_STATEs seen before")
        if judged.seq is not None:
            self.seqs = [*self.seqs[-99:], judged.seq]
        return judged.decisions


TAKES = {"dialect", "obs_shape", "obs_dtype", "action_space", "action_n", "action_dim", "frame_cap"}


def spec(options: RLlinkOptions | None = None) -> TapSpec:
    chosen = options or RLlinkOptions()
    active = frozenset(clause.id for clause in CATALOGUE if clause.id not in PASSIVE)
    return TapSpec(CATALOGUE, active, frozenset(), lambda: RllinkWatcher(chosen))
