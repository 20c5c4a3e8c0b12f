"""The OpenEnv tap: discovery and simulation-mode HTTP answers, and every /ws session, judged by the openenv
suite's own judges (`checks.openenv.http_judging`, `checks.openenv.judging`).

A copy can decide the discovery answers, the /ws upgrade, each reply's envelope, reward and observation
schema against the /schema the traffic fetched, the order of replies, frames nobody asked for, the state's
shape, episode id and step count since the last reset, error codes, actions the schema admits being
accepted, and a clean close. What needs messages of the checker's making (invalid and hostile input,
capacity, isolation, determinism, seeds, latency, MCP) is `skip` "needs an active run".
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from checks.decision import Decision
from checks.errors import PeerClosed
from checks.openenv import http_judging
from checks.openenv import judging as ws_judging
from checks.openenv import judging_sessions as sessions_judging
from checks.openenv.clauses import CATALOGUE
from checks.openenv.options import OpenEnvOptions
from checks.openenv.schemas import schema_errors
from checks.openenv.session import Reply, decode_frame
from checks.tap.copies import Copy
from checks.tap.exchanges import ExchangeWatcher, reply_of
from checks.tap.http1 import HttpMessage
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec
from checks.tap.wsframes import BINARY, CLOSE, TEXT, Inflater, WsMessage, deflate_params

DISCOVERY = {
    "/health": http_judging.health,
    "/metadata": http_judging.metadata,
    "/schema": http_judging.schema,
    "/openapi.json": http_judging.openapi,
}
REPLY_CLAUSES = (
    "openenv.ws.envelope",
    "openenv.ws.reward",
    "openenv.ws.reward-range",
    "openenv.schema.observation-valid",
    "openenv.schema.action-accepted",
    "openenv.errors.codes",
    "openenv.ws.order",
    "openenv.state.shape",
    "openenv.state.episode-id",
    "openenv.state.step-count",
)
PASSIVE = frozenset(
    {
        "openenv.discover.health",
        "openenv.discover.metadata",
        "openenv.discover.schema",
        "openenv.discover.openapi",
        "openenv.mode.consistent",
        "openenv.http.reset",
        "openenv.http.step",
        "openenv.ws.handshake",
        "openenv.ws.unprompted",
        "openenv.close.clean",
        *REPLY_CLAUSES,
    }
)
TAKES = {"reward_range"}


@dataclass
class Session:
    """One /ws session as the replies so far show it."""

    pending: deque[tuple[str, Any]] = field(default_factory=deque)  # (type, data) of messages awaiting a reply
    steps: int | None = None  # accepted steps since the last reset (None: no reset seen)
    episode_id: Any = None
    closing: bool = False  # the client sent {"type": "close"}
    order_lost: bool = False
    handshake_judged: bool = False
    inflaters: dict[str, Inflater] = field(default_factory=dict)  # by sender, when permessage-deflate was agreed

    def payload(self, copy: Copy, message: WsMessage) -> bytes | None:
        inflater = self.inflaters.get(copy.sender)
        if inflater is None:
            return message.payload()
        return inflater.payload(message, copy.after_gap)


class OpenEnvWatcher(ExchangeWatcher):
    upgrades = True

    def __init__(self, options: OpenEnvOptions) -> None:
        super().__init__()
        self.options = options
        self.schema: dict[str, Any] | None = None  # the /schema the traffic fetched, once it has
        self.sessions: dict[int, Session] = {}

    def exchange(self, connection: int, request: HttpMessage, response: HttpMessage, ledger: Ledger) -> None:
        method, path = request.head.method_path()
        path = path.split("?")[0].rstrip("/") or "/"
        reply = reply_of(request, response)
        if method == "GET" and path.endswith("/ws"):
            session = self.sessions[connection] = Session()
            upgraded = reply.status == 101
            takeover = deflate_params(response.head) if upgraded else None
            if takeover is not None:
                session.inflaters = {sender: Inflater(keeps) for sender, keeps in takeover.items()}
            if not upgraded:  # an upgraded session's handshake is judged on its first reply, as the suite does
                ledger.decide(connection, [sessions_judging.handshake_refused(f"answered {reply.describe()}")])
        elif method == "GET" and path in DISCOVERY:
            ledger.judge(connection, (), lambda: [DISCOVERY[path](reply)])
            if path == "/schema" and reply.status == 200:
                self.schema = http_judging.usable_schema(reply.body) or self.schema
            paths = http_judging.openapi_paths(reply) if path == "/openapi.json" else None
            if paths is not None:
                ledger.decide(connection, [http_judging.mode(paths)])
        elif method == "POST" and path in ("/reset", "/step"):
            sent = reply.sent.get("action") if isinstance(reply.sent, dict) else None
            if path == "/reset" or self._admitted(sent) is True:
                ledger.decide(connection, [http_judging.result(f"openenv.http{path.replace('/', '.')}", reply)])

    def _admitted(self, action: Any) -> bool | None:
        """Whether /schema.action admits `action` (None: no schema seen to tell)."""
        if self.schema is None:
            return None
        return not schema_errors(action, self.schema["action"], self.schema["action"])

    def frame(self, copy: Copy, message: WsMessage, ledger: Ledger) -> None:
        session = self.sessions.setdefault(copy.connection, Session())
        session.order_lost = session.order_lost or copy.after_gap
        if message.opcode == CLOSE:
            code, reason = message.close_code()
            ledger.note(copy.connection, f"{copy.sender}: close {code} {reason!r}")
            if copy.sender == "server" and session.closing:
                closed = PeerClosed(by="peer", code=code, reason=reason)
                ledger.decide(copy.connection, [sessions_judging.close_clean(closed, [])])
            return
        if message.opcode not in (TEXT, BINARY):
            return
        payload = session.payload(copy, message)
        if payload is None:  # compressed after a dropped copy: this direction can no longer be read
            session.order_lost = True
            ledger.note(copy.connection, f"{copy.sender}: a compressed message that cannot be inflated")
            return
        data: bytes | str = payload.decode("utf-8", "replace") if message.opcode == TEXT else payload
        reply = decode_frame(data)
        ledger.note(copy.connection, f"{copy.sender}: {reply.describe()[:200]}")
        if copy.sender == "client":
            kind = reply.kind or "?"
            if kind == "close":
                session.closing = True
            else:
                session.pending.append((kind, reply.data))
            return
        ledger.judge(copy.connection, REPLY_CLAUSES, lambda: self._reply(session, reply))

    def _reply(self, session: Session, reply: Reply) -> list[Decision]:
        if reply.binary:  # a session speaks JSON text frames: its handshake was not OpenEnv's
            session.handshake_judged = True
            return [sessions_judging.handshake(reply)]
        if session.closing and not session.pending:  # replies to messages sent before the close may still come
            return [sessions_judging.frame_after_close(reply)]
        replies = ("observation", "state", "error")
        typed_otherwise = reply.kind is not None and reply.kind not in replies
        if not session.pending or (typed_otherwise and not session.order_lost):
            # A frame of a type no message is answered with (a greeting, a heartbeat): unasked, whatever is pending.
            problem = ws_judging.unprompted_problem(reply)
            if problem is None:
                return []
            if session.order_lost:
                return []  # the message this answers may be the copy that was dropped
            return [sessions_judging.unprompted(reply, "unasked")]
        kind, sent = session.pending.popleft()
        decisions = [sessions_judging.answered(kind)]
        if not session.handshake_judged:  # a session's first reply decides its handshake, as in the suite
            session.handshake_judged = True
            decisions.append(sessions_judging.handshake(reply))
        if reply.kind == "error":
            decisions.append(ws_judging.error_code_decision(reply))
            if kind == "step" and self._admitted(sent) is True:
                decisions.append(self._accepted(reply, sent))
            return decisions
        order = sessions_judging.reply_order(kind, reply)
        if order is not None and not session.order_lost:
            decisions.append(order)
        if kind in ("reset", "step") and reply.kind == "observation":
            decisions += self._observation(session, kind, sent, reply)
        elif kind == "state" and reply.kind == "state":
            decisions += self._state(session, reply)
        return decisions

    def _observation(self, session: Session, kind: str, sent: Any, reply: Reply) -> list[Decision]:
        decisions = ws_judging.observation_decisions(reply, self.schema, self.options, on_reset=kind == "reset")
        if kind == "reset":
            session.steps = 0
            session.episode_id = sent.get("episode_id") if isinstance(sent, dict) else None
        else:
            session.steps = None if session.steps is None else session.steps + 1
            if self._admitted(sent) is True:
                decisions.append(self._accepted(reply, sent))
        return decisions

    def _accepted(self, reply: Reply, sent: Any) -> Decision:
        return sessions_judging.action_accepted(reply, f"{json.dumps(sent)[:120]}, which /schema.action admits")

    def _state(self, session: Session, reply: Reply) -> list[Decision]:
        decisions = [sessions_judging.state_shape(reply)]
        if decisions[0].missed or session.order_lost:
            return decisions
        if session.steps is not None:
            decisions.append(sessions_judging.step_count_is(reply, session.steps, "(steps accepted since the reset)"))
        if isinstance(session.episode_id, str):
            decisions.append(sessions_judging.episode_id(reply, session.episode_id))
        return decisions

    def forget(self, connection: int) -> None:
        self.sessions.pop(connection, None)


def spec(options: OpenEnvOptions | None = None) -> TapSpec:
    chosen = options or OpenEnvOptions()
    active = frozenset(clause.id for clause in CATALOGUE if clause.id not in PASSIVE)
    return TapSpec(CATALOGUE, active, frozenset(), lambda: OpenEnvWatcher(chosen))
