"""The session-server tap: the lifecycle routes and each GET of a session's records, judged with the
session-server suite's own judges (`checks.session.judging`), and every chat through a session's proxy
judged as the openai-chat tap judges it (under the suite's default `miles-session` profile).

A copy can decide /health, creates, deletes and what answers after a delete, and from each GET of a
session alone: the records' envelope, TITO, forced fields and tool call ids, the reply each record
holds against the reply the agent got through the tap, and a streamed chat ending in [DONE]. What needs
calls of the checker's making (a failed call, the retry schedule, truncation, concurrency, samples) is
`skip` "needs an active run".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from checks.decision import Decision
from checks.http_client import Reply
from checks.openai.options import PRESETS
from checks.session import judging
from checks.session.agent import Step
from checks.session.clauses import CATALOGUE
from checks.session.facts import metadata_of, records_of
from checks.session.stream import assembled_completion, sse_payloads
from checks.tap import openai as tap_openai
from checks.tap.exchanges import reply_of
from checks.tap.http1 import HttpMessage
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec

SESSION_PATH = re.compile(r"^/sessions/([^/?]+)(/.*)?$")
RECORD_CLAUSES = (
    "session.ss04.one-record-per-call",
    "session.ss05.record-matches-reply",
    "session.ss06.tito",
    "session.ss07.forced-fields",
    "session.ss14.tool-call-ids",
)
PASSIVE = frozenset(
    {
        "session.ss01.health",
        "session.ss02.create",
        "session.ss03.lifecycle",
        *RECORD_CLAUSES,
        *tap_openai.PASSIVE,
    }
)


@dataclass
class Seen:
    """What the traffic showed of the sessions: ids created and deleted, and the replies agents got."""

    instance_id: str | None = None
    created: set[str] = field(default_factory=set)
    unchatted: set[str] = field(default_factory=set)  # created here and not chatted in yet
    deleted: dict[str, int] = field(default_factory=dict)  # sid -> when its DELETE was answered (copy order)
    replies: dict[str, dict[str, tuple[dict[str, Any], Reply]]] = field(default_factory=dict)  # sid -> id -> step


class SessionWatcher(tap_openai.OpenAIWatcher):
    def __init__(self) -> None:
        super().__init__(PRESETS["miles-session"])
        self.seen = Seen()

    def exchange(self, connection: int, request: HttpMessage, response: HttpMessage, ledger: Ledger) -> None:
        method, path = request.head.method_path()
        path = path.split("?")[0]
        reply = reply_of(request, response)
        routed = SESSION_PATH.match(path)
        if method == "GET" and path == "/health":
            ledger.judge(connection, ("session.ss01.health",), lambda: [self._health(reply)])
        elif method == "POST" and path == "/sessions":
            ledger.judge(connection, ("session.ss02.create",), lambda: [self._created(reply)])
        elif routed is not None and self.asked_at > self.seen.deleted.get(routed.group(1), self.copies):
            # Asked after the DELETE was answered: a request already in flight may still be served.
            ledger.decide(connection, [judging.gone_reply(method, path, reply)])
        elif routed is not None:
            sid, rest = routed.group(1), routed.group(2) or ""
            if method == "DELETE" and not rest:
                ledger.decide(connection, [self._deleted(sid, reply)])
            elif method == "GET" and not rest and reply.status == 200:
                ledger.judge(connection, RECORD_CLAUSES, lambda: self._records(sid, reply))
            elif rest.endswith("/chat/completions"):
                self.seen.unchatted.discard(sid)
                super().exchange(connection, request, response, ledger)
                ledger.judge(connection, ("session.ss07.forced-fields",), lambda: self._chat(sid, reply))
            else:
                super().exchange(connection, request, response, ledger)

    def _health(self, reply: Reply) -> Decision:
        decision = judging.health_reply(reply, self.seen.instance_id)
        instance = reply.body.get("session_server_instance_id") if isinstance(reply.body, dict) else None
        self.seen.instance_id = self.seen.instance_id or instance
        return decision

    def _created(self, reply: Reply) -> Decision:
        decision = judging.create_reply(reply, self.seen.created)
        sid = reply.body.get("session_id") if isinstance(reply.body, dict) else None
        if not decision.missed and isinstance(sid, str):
            self.seen.created.add(sid)
            self.seen.unchatted.add(sid)
        return decision

    def _deleted(self, sid: str, reply: Reply) -> Decision:
        decision = judging.delete_reply(reply)
        if not decision.missed:
            self.seen.deleted[sid] = self.copies
        return decision

    def _records(self, sid: str, snapshot: Reply) -> list[Decision]:
        records = records_of(snapshot)
        decisions = [judging.new_session_records(snapshot)] if sid in self.seen.unchatted else []
        if not records:
            return decisions
        decisions += judging.records_held(records, metadata_of(snapshot))
        seen = self.seen.replies.get(sid, {})
        matched = [
            (Step("tap", *seen[rid], snapshot), r)
            for r in records
            if (rid := (r.get("response") or {}).get("id")) in seen
        ]
        if matched:
            decisions.append(judging.records_match_replies(matched))
        return decisions

    def _chat(self, sid: str, reply: Reply) -> list[Decision]:
        sent = reply.sent if isinstance(reply.sent, dict) else None
        if sent is None or reply.status != 200 or not isinstance(sent.get("messages"), list):
            return []
        decisions = []
        if "text/event-stream" in reply.content_type:
            done = sse_payloads(reply.raw)[1]
            decisions.append(judging.stream_done(done))
            body: Any = assembled_completion(reply.raw)
            reply = Reply(200, content_type="application/json", body=body, is_json=True, raw=reply.raw)
        if isinstance(reply.body, dict) and isinstance(reply.body.get("id"), str):
            kept = self.seen.replies.setdefault(sid, {})
            kept[reply.body["id"]] = (sent, reply)
            while len(kept) > 256:  # bounded: a long session's oldest replies leave first
                kept.pop(next(iter(kept)))
        return decisions


def spec() -> TapSpec:
    active = frozenset(clause.id for clause in CATALOGUE if clause.id not in PASSIVE)
    return TapSpec(CATALOGUE, active, frozenset(), SessionWatcher)
