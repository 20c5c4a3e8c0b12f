"""The ORS tap: discovery, sessions and every tool call's SSE stream a real client gets, judged by the ors
suite's own judges (`checks.ors.judging`, `checks.ors.judging_calls`).

A copy can decide discovery's shapes, what /create_session and /create answer, prompts, pings on live
sessions, what answers after a /delete, each call stream's content type, events and result, a second
reward after finished, and every 4xx and 5xx body. What needs requests of the checker's making (unknown
envs, tools and ids, invalid splits and inputs, missing headers, resume, keep-alive and expiry) is
`skip` "needs an active run".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.decision import Decision
from checks.http_client import Reply
from checks.ors import judging, judging_calls
from checks.ors.clauses import CATALOGUE
from checks.ors.stream import OrsStream, is_sse, output_of, parse_stream, refused, result_of, sid_of
from checks.tap.exchanges import ExchangeWatcher, reply_of
from checks.tap.http1 import HttpMessage
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec

CALL_CLAUSES = (
    "ors.call.sse-content-type",
    "ors.call.first-event-task-id",
    "ors.call.terminal-event",
    "ors.call.chunk-reassembly",
    "ors.call.result-envelope",
    "ors.call.tooloutput-shape",
    "ors.call.reward-number",
    "ors.finished.after-finished",
)
ENV_CLAUSES = (
    *CALL_CLAUSES,
    "ors.tools.shape",
    "ors.splits.shape",
    "ors.tasks.shape",
    "ors.prompt.blocks",
    "ors.delete.teardown",
)
SHAPES = {"tools": judging.judge_tools, "splits": judging.judge_splits, "tasks": judging.judge_tasks}
TOP_CLAUSES = (
    "ors.health.ok",
    "ors.discovery.list-envs",
    "ors.session.create-session",
    "ors.session.create-session-unique",
    "ors.session.create",
    "ors.ping.ok",
    "ors.delete.teardown",
)
TOP_ROUTES = ("health", "list_environments", "create_session", "create", "ping", "delete", "delete_session")
ENV_ROUTES = ("tools", "splits", "tasks", "task", "prompt", "call")
PASSIVE = frozenset(
    {
        "ors.health.ok",
        "ors.discovery.list-envs",
        "ors.tools.shape",
        "ors.splits.shape",
        "ors.tasks.shape",
        "ors.session.create-session",
        "ors.session.create-session-form",
        "ors.session.create-session-unique",
        "ors.session.create",
        "ors.prompt.blocks",
        "ors.ping.ok",
        "ors.delete.teardown",
        "ors.errors.json-detail",
        *CALL_CLAUSES,
    }
)


@dataclass
class Sessions:
    issued: set[str] = field(default_factory=set)  # ids /create_session gave out
    live: set[str] = field(default_factory=set)  # created by a /create answered 200, not deleted since
    deleted: dict[str, int] = field(default_factory=dict)  # id -> when its /delete was answered (copy order)
    finished: set[str] = field(default_factory=set)  # a call on it answered finished: true


class OrsWatcher(ExchangeWatcher):
    def __init__(self) -> None:
        super().__init__()
        self.sessions = Sessions()

    def exchange(self, connection: int, request: HttpMessage, response: HttpMessage, ledger: Ledger) -> None:
        method, path = request.head.method_path()
        parts = [part for part in path.split("?")[0].split("/") if part]
        reply = reply_of(request, response)
        sid = request.head.value("x-session-id") or None
        route = "/".join(parts[-1:]) if len(parts) <= 2 else ""
        known = route in (TOP_ROUTES if len(parts) == 1 else ENV_ROUTES)
        if reply.status >= 400 and known:  # a route outside the spec (/version, /docs) answers as it likes
            ledger.decide(connection, [judging.judge_error_bodies([reply])])
        if len(parts) == 1:
            ledger.judge(connection, TOP_CLAUSES, lambda: self._top(method, route, sid, reply))
        elif len(parts) == 2:
            ledger.judge(connection, ENV_CLAUSES, lambda: self._env_route(method, route, sid, reply))

    def _top(self, method: str, route: str, sid: str | None, reply: Reply) -> list[Decision]:
        if method == "GET" and route == "health":
            return [judging.judge_health(reply)]
        if method == "GET" and route == "list_environments":
            return [judging.judge_list_envs(reply)]
        if method == "POST" and route == "create_session":
            decisions = judging.judge_create_sessions([reply], self.sessions.issued)
            self.sessions.issued.update(sid for sid, _ in map(sid_of, [reply]) if sid)
            return decisions
        if method == "POST" and route == "create" and sid is not None:
            return self._create(sid, reply)
        if method == "POST" and route == "ping" and sid is not None:
            live = sid in self.sessions.live
            return self._after_delete(sid, "/ping", reply) or ([judging.judge_ping(reply)] if live else [])
        if method == "POST" and route == "delete" and sid is not None and 200 <= reply.status < 300:
            self.sessions.live.discard(sid)
            self.sessions.deleted[sid] = self.copies
        return []

    def _create(self, sid: str, reply: Reply) -> list[Decision]:
        sent = reply.sent if isinstance(reply.sent, dict) else {}
        if not ("split" in sent and "index" in sent and "task_spec" not in sent) or sid in self.sessions.live:
            return []  # only a new id with split and index is sure to be created
        decision = judging.judge_create(sid, reply)
        if not decision.missed:
            self.sessions.live.add(sid)
        return [decision]

    def _after_delete(self, sid: str, route: str, reply: Reply) -> list[Decision]:
        if self.asked_at <= self.sessions.deleted.get(sid, self.copies):
            return []  # not deleted, or asked before its /delete was answered
        return [judging.judge_teardown({route: reply})]

    def _env_route(self, method: str, route: str, sid: str | None, reply: Reply) -> list[Decision]:
        if route in SHAPES and reply.status == 200:
            return [SHAPES[route](reply)]
        if method == "GET" and route == "prompt" and sid is not None:
            gone = self._after_delete(sid, "/prompt", reply)
            return gone if gone or reply.status != 200 else [judging.judge_prompt(reply)]
        if method == "POST" and route == "call" and sid is not None:
            return self._after_delete(sid, "/call", reply) or self._call(sid, reply)
        return []

    def _call(self, sid: str, reply: Reply) -> list[Decision]:
        stream = parse_stream(reply.text) if is_sse(reply.content_type) else OrsStream()
        resume = isinstance(reply.sent, dict) and "task_id" in reply.sent  # its answer is an active run's business
        after = [judging_calls.judge_after_finished(stream)] if sid in self.sessions.finished and not resume else []
        if refused(reply):
            return after
        decisions = [*after, judging_calls.judge_content_type(reply)]
        if not is_sse(reply.content_type):
            return decisions
        if resume:
            return [*decisions, judging_calls.judge_terminal(stream)]
        output = output_of(result_of(stream)[0])
        if output is not None and output.get("finished") is True:
            self.sessions.finished.add(sid)
        return [*decisions, *judging_calls.judge_stream(stream)]


def spec() -> TapSpec:
    active = frozenset(clause.id for clause in CATALOGUE if clause.id not in PASSIVE)
    return TapSpec(CATALOGUE, active, frozenset(), OrsWatcher)
