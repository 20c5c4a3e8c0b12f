"""The ORS tap: discovery, sessions and every tool call's SSE stream a real client gets, judged by the ors
suite's own judges (`checks.ors.judging`).

A copy can decide discovery's shapes, what /create_session and /create answer, prompts, pings on live
sessions, what answers after a /delete, each call stream's content type, events and result, a second
reward after finished, and every 4xx and 5xx body. What needs requests of the checker's making (unknown
envs, tools and ids, invalid splits and inputs, missing headers, resume, keep-alive and expiry) is
`skip` "needs an active run".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from checks.decision import Decision, check, info, missed, passed
from checks.http_client import Reply
from checks.ors import judging
from checks.ors.clauses import CATALOGUE
from checks.tap.exchanges import ExchangeWatcher, reply_of
from checks.tap.http1 import HttpMessage
from checks.tap.ledger import Ledger
from checks.tap.run import TapSpec
from checks.task_index import splits_problem

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
ENV_CLAUSES = (*CALL_CLAUSES, "ors.tools.shape", "ors.splits.shape", "ors.tasks.shape", "ors.prompt.blocks")
SHAPES = {
    "tools": ("ors.tools.shape", judging.tools_problem, '{"tools": [ToolSpec...]}'),
    "splits": ("ors.splits.shape", splits_problem, "an array of {name, type}"),
    "tasks": ("ors.tasks.shape", judging.tasks_problem, '{"tasks": [...], "env_name": str}'),
}
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


def _problem(clause_id: str, problem: str, expected: str) -> Decision:
    return (
        missed(clause_id, expected=expected, actual=problem)
        if problem
        else passed(clause_id, actual="as expected", expected=expected)
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
            ledger.decide(connection, [self._error_body(reply)])
        if len(parts) == 1:
            ledger.judge(connection, TOP_CLAUSES, lambda: self._top(method, route, sid, reply))
        elif len(parts) == 2:
            ledger.judge(connection, ENV_CLAUSES, lambda: self._env_route(method, route, sid, reply))

    def _error_body(self, reply: Reply) -> Decision:
        problem = judging.error_body_problem(reply)
        return _problem("ors.errors.json-detail", problem, 'a JSON object with a "detail" key')

    def _top(self, method: str, route: str, sid: str | None, reply: Reply) -> list[Decision]:
        if method == "GET" and route == "health":
            held = reply.status == 200 and isinstance(reply.body, dict) and reply.body.get("status") == "ok"
            return [check(held, "ors.health.ok", expected='200 {"status": "ok"}', actual=reply.describe(120))]
        if method == "GET" and route == "list_environments":
            body = reply.body
            held = (
                reply.status == 200 and isinstance(body, list) and bool(body) and all(isinstance(n, str) for n in body)
            )
            return [
                check(
                    held, "ors.discovery.list-envs", expected="a non-empty array of names", actual=reply.describe(120)
                )
            ]
        if method == "POST" and route == "create_session":
            return self._create_session(reply)
        if method == "POST" and route == "create" and sid is not None:
            return self._create(sid, reply)
        if method == "POST" and route == "ping" and sid is not None:
            return self._after_delete(sid, reply) or self._ping(sid, reply)
        if method == "POST" and route == "delete" and sid is not None and 200 <= reply.status < 300:
            self.sessions.live.discard(sid)
            self.sessions.deleted[sid] = self.copies
        return []

    def _create_session(self, reply: Reply) -> list[Decision]:
        sid, form = judging.sid_of(reply)
        clause = "ors.session.create-session"
        if sid is None:
            return [missed(clause, expected='{"sid": str} or an SSE stream carrying it', actual=form)]
        unique = sid not in self.sessions.issued
        self.sessions.issued.add(sid)
        return [
            passed(clause, actual=f"sid {sid} ({form})"),
            info("ors.session.create-session-form", actual=f"answered in {form}"),
            check(unique, "ors.session.create-session-unique", expected="a new id", actual=f"sid {sid}"),
        ]

    def _create(self, sid: str, reply: Reply) -> list[Decision]:
        sent = reply.sent if isinstance(reply.sent, dict) else {}
        if not ("split" in sent and "index" in sent and "task_spec" not in sent) or sid in self.sessions.live:
            return []  # only a new id with split and index is sure to be created
        body = reply.body if isinstance(reply.body, dict) else {}
        held = reply.status == 200 and body.get("sid") == sid
        if held:
            self.sessions.live.add(sid)
        return [check(held, "ors.session.create", expected=f'200 {{"sid": "{sid}"}}', actual=reply.describe(120))]

    def _ping(self, sid: str, reply: Reply) -> list[Decision]:
        if sid not in self.sessions.live:
            return []
        held = reply.status == 200 and isinstance(reply.body, dict) and reply.body.get("status") == "ok"
        return [
            check(held, "ors.ping.ok", expected='200 {"status": "ok"} on a live session', actual=reply.describe(120))
        ]

    def _after_delete(self, sid: str, reply: Reply) -> list[Decision]:
        if self.asked_at <= self.sessions.deleted.get(sid, self.copies):
            return []  # not deleted, or asked before its /delete was answered
        held = judging.refused(reply)
        return [check(held, "ors.delete.teardown", expected="a 4xx after /delete", actual=reply.describe(120))]

    def _env_route(self, method: str, route: str, sid: str | None, reply: Reply) -> list[Decision]:
        if route in SHAPES and reply.status == 200:
            clause, problem_of, expected = SHAPES[route]
            return [_problem(clause, problem_of(reply.body), expected)]
        if method == "GET" and route == "prompt" and sid is not None:
            gone = self._after_delete(sid, reply)
            if gone or reply.status != 200:
                return gone
            return [_problem("ors.prompt.blocks", judging.blocks_problem(reply.body), "an array of blocks")]
        if method == "POST" and route == "call" and sid is not None:
            if not judging.refused(reply):
                return self._call(sid, reply)
            if sid in self.sessions.finished:
                return [passed("ors.finished.after-finished", actual=f"refused: {reply.describe(80)}")]
        return []

    def _call(self, sid: str, reply: Reply) -> list[Decision]:
        decisions = [judging.judge_content_type(reply)]
        if not judging.is_sse(reply.content_type):
            return decisions
        stream = judging.parse_stream(reply.text)
        decisions.append(judging.judge_terminal(stream))
        if isinstance(reply.sent, dict) and "task_id" in reply.sent:
            return decisions  # a resume: what it answers is the resume clause's business, an active run's
        decisions.append(judging.judge_first_event(stream))
        if stream.first("end") is None:
            return decisions
        decisions.append(judging.judge_chunks(stream))
        result, problem = judging.result_of(stream)
        if problem:
            return decisions
        decisions += judging.judge_result(result)
        output = result.get("output") if isinstance(result, dict) and result.get("ok") is True else None
        reward = output.get("reward") if isinstance(output, dict) else None
        if sid in self.sessions.finished:
            expected = "a call after finished refused, or no reward"
            decisions.append(
                check(reward is None, "ors.finished.after-finished", expected=expected, actual=f"reward {reward!r}")
            )
        if isinstance(output, dict) and output.get("finished") is True:
            self.sessions.finished.add(sid)
        return decisions


def spec() -> TapSpec:
    active = frozenset(clause.id for clause in CATALOGUE if clause.id not in PASSIVE)
    return TapSpec(CATALOGUE, active, frozenset(), OrsWatcher)
