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

from checks.decision import Decision, check
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
from checks.tap.run import TapSpec

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


def _problems(clause_id: str, problems: list[str], expected: str, fine: str) -> Decision:
    return check(not problems, clause_id, expected=expected, actual="; ".join(problems[:3]) or fine)


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
            ledger.decide(connection, [self._gone(method, path, reply)])
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
        body = reply.body if isinstance(reply.body, dict) else {}
        instance = body.get("session_server_instance_id")
        problem = "" if reply.status == 200 and body.get("status") == "ok" else f"answered {reply.describe(120)}"
        if instance is not None and not (isinstance(instance, str) and judging.HEX32.fullmatch(instance)):
            problem = problem or f"session_server_instance_id {instance!r} is not 32 hex characters"
        elif instance is not None and self.seen.instance_id not in (None, instance):
            problem = problem or f"session_server_instance_id changed from {self.seen.instance_id} to {instance}"
        self.seen.instance_id = self.seen.instance_id or instance
        expected = '200 {"status": "ok"}, the same 32-hex session_server_instance_id if any'
        return check(not problem, "session.ss01.health", expected=expected, actual=problem or reply.describe(120))

    def _created(self, reply: Reply) -> Decision:
        sid = reply.body.get("session_id") if isinstance(reply.body, dict) else None
        problem = "" if reply.status == 200 else f"answered {reply.describe(120)}"
        if not problem and not (isinstance(sid, str) and judging.HEX32.fullmatch(sid)):
            problem = f"session_id {sid!r} is not 32 hex characters"
        elif not problem and sid in self.seen.created:
            problem = f"session_id {sid} was given out before"
        if not problem and isinstance(sid, str):
            self.seen.created.add(sid)
            self.seen.unchatted.add(sid)
        expected = '200 {"session_id": <32 hex>}, a new id each time'
        return check(not problem, "session.ss02.create", expected=expected, actual=problem or f"session {sid}")

    def _deleted(self, sid: str, reply: Reply) -> Decision:
        held = reply.status == 204 and not reply.raw
        if held:
            self.seen.deleted[sid] = self.copies
        return check(held, "session.ss03.lifecycle", expected="204 with an empty body", actual=reply.describe(120))

    def _gone(self, method: str, path: str, reply: Reply) -> Decision:
        message = reply.error_message()
        held = reply.status == 404 and message is not None and message.startswith("session not found")
        expected = f'{method} {path} after its DELETE: 404 {{"error": "session not found: ..."}}'
        return check(held, "session.ss03.lifecycle", expected=expected, actual=reply.describe(120))

    def _records(self, sid: str, snapshot: Reply) -> list[Decision]:
        records, metadata = records_of(snapshot), metadata_of(snapshot)
        decisions = []
        if sid in self.seen.unchatted:
            held = isinstance(snapshot.body, dict) and snapshot.body.get("records") == []
            actual = f"{len(records)} records" if not held else "no records"
            decisions.append(
                check(held, "session.ss02.create", expected="a new session lists no records", actual=actual)
            )
        if not records:
            return decisions
        envelope = judging.envelope_problems(records)
        decisions += [
            _problems(RECORD_CLAUSES[0], envelope, "records of /v1/chat/completions, 200, in time order", "in order"),
            _problems(RECORD_CLAUSES[2], judging.tito_problems(records, metadata), "TITO from records alone", "held"),
            _problems(RECORD_CLAUSES[3], judging.forced_field_problems(records), "input_ids, logprobs, meta", "set"),
            _problems(RECORD_CLAUSES[4], judging.tool_id_problems(records), "tool_call_ids name calls", "named"),
        ]
        seen = self.seen.replies.get(sid, {})
        matched = [(seen[rid], r) for r in records if (rid := (r.get("response") or {}).get("id")) in seen]
        problems = [p for (sent, reply), record in matched for p in judging.record_reply_problems(
            Step("tap", sent, reply, snapshot), record)]  # fmt: skip
        if matched:
            decisions.append(_problems(RECORD_CLAUSES[1], problems, "records hold what the agent saw", "they do"))
        return decisions

    def _chat(self, sid: str, reply: Reply) -> list[Decision]:
        sent = reply.sent if isinstance(reply.sent, dict) else None
        if sent is None or reply.status != 200 or not isinstance(sent.get("messages"), list):
            return []
        decisions = []
        if "text/event-stream" in reply.content_type:
            done = sse_payloads(reply.raw)[1]
            decisions.append(
                check(done, "session.ss07.forced-fields", expected="SSE ending in [DONE]", actual=f"[DONE]: {done}")
            )
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
