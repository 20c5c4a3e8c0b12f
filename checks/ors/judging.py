"""The ORS rules as pure judges: observed answers in, clause decisions out.

Nothing here touches the network, so a live phase, the tap's copy of a real
client's traffic, a parity run and a test on built bytes all use the same
rules. How answers are read (SSE events, the RunToolOutput, a /create_session
id) is `checks.ors.stream`; call judges are in `checks.ors.judging_calls`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from checks.decision import Decision, check, info, missed, passed
from checks.evidence import summarize
from checks.http_client import Reply
from checks.ors.stream import refused, server_error, sid_of
from checks.task_index import IndexProbe, index_disagreements, splits_problem

OK_BODY = '200 {"status": "ok"}'


def _problem(clause: str, problem: str, expected: str, fine: str = "well formed") -> Decision:
    """Missed with `problem`, or passed when there is none."""
    return (
        missed(clause, expected=expected, actual=problem) if problem else passed(clause, actual=fine, expected=expected)
    )


def _shape_of(reply: Reply, clause: str, problem_of: Callable[[Any], str], expected: str) -> Decision:
    """A 200 reply's body judged by `problem_of` (its problem, or "" when well formed); another status is the
    problem itself."""
    return _problem(clause, problem_of(reply.body) if reply.status == 200 else reply.describe(), expected)


def _status_ok(reply: Reply) -> bool:
    return reply.status == 200 and isinstance(reply.body, dict) and reply.body.get("status") == "ok"


def _all_refused(clause: str, answers: dict[str, Reply], expected: str = "a 4xx on each route") -> Decision:
    wrong = [f"{route}: {reply.describe(60)}" for route, reply in answers.items() if not refused(reply)]
    return _problem(clause, "; ".join(wrong), expected, "all 4xx")


# -- HTTP API > Discovery


def judge_health(reply: Reply) -> Decision:
    return check(_status_ok(reply), "ors.health.ok", expected=OK_BODY, actual=reply.describe(120))


def env_names(reply: Reply) -> list[str]:
    return [n for n in reply.body if isinstance(n, str)] if isinstance(reply.body, list) else []


def judge_list_envs(reply: Reply) -> Decision:
    names = reply.body
    held = reply.status == 200 and isinstance(names, list) and bool(names) and all(isinstance(n, str) for n in names)
    return check(held, "ors.discovery.list-envs", expected="a non-empty JSON array of strings", actual=reply.describe())


def judge_names_usable(names: Sequence[str], answers: dict[str, Reply]) -> Decision:
    """`answers`: path -> what GET /{name}/tools and /{name}/splits answered, redirects not followed."""
    wrong = [f"{path}: {reply.describe(60)}" for path, reply in answers.items() if reply.status != 200]
    expected = "200 for /{env}/tools and /{env}/splits of every listed name"
    if not names:
        return missed("ors.discovery.env-name-usable", expected=expected, actual="no names listed")
    return _problem("ors.discovery.env-name-usable", "; ".join(wrong), expected, f"{len(names)} names usable")


def judge_unknown_env(reply: Reply) -> Decision:
    held = reply.status == 404 or 300 <= reply.status < 400
    return check(held, "ors.discovery.unknown-env", expected="404, or a redirect", actual=reply.describe())


def tools_problem(body: Any) -> str:
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list):
        return f"no tools array: {summarize(body, 120)}"
    for spec in tools:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            return f"a tool without a string name: {summarize(spec, 120)}"
        if not isinstance(spec.get("description"), str):
            return f"tool {spec['name']!r} has no string description"
        if "input_schema" not in spec:
            return f"tool {spec['name']!r} has no input_schema key"
        schema = spec["input_schema"]
        if schema is not None and not (isinstance(schema, dict) and schema.get("type", "object") == "object"):
            return f"tool {spec['name']!r}: input_schema is not null or an object schema: {summarize(schema, 80)}"
    return ""


def tasks_problem(body: Any) -> str:
    tasks = body.get("tasks") if isinstance(body, dict) else None
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        return f"no tasks array of objects: {summarize(body, 120)}"
    if not isinstance(body.get("env_name"), str):
        return f"no env_name string: {summarize(body, 120)}"
    return ""


def judge_tools(reply: Reply) -> Decision:
    return _shape_of(reply, "ors.tools.shape", tools_problem, "ToolSpecs")


def judge_splits(reply: Reply) -> Decision:
    return _shape_of(reply, "ors.splits.shape", splits_problem, "[{name, type}]")


def judge_tasks(reply: Reply, count: Reply | None = None) -> Decision:
    """/tasks for a declared split; `count`: what /num_tasks answered for it, when asked (after a refusal).

    Both SDKs let an env leave list_tasks out and serve only the index API; its /tasks is then a
    4xx saying so, which is not judged while /num_tasks counts the split."""
    if refused(reply) and count is not None and task_count(count) is not None:
        why = f"not judged: /tasks refused ({reply.describe(80)}) while the index API counts {task_count(count)} tasks"
        return info("ors.tasks.shape", actual=why)
    return _shape_of(reply, "ors.tasks.shape", tasks_problem, '{"tasks": [...], "env_name": str}')


def judge_invalid_split(reply: Reply) -> Decision:
    return check(refused(reply), "ors.tasks.invalid-split", expected="a 4xx (400 in the spec)", actual=reply.describe())


def note_unknown_keys(reply: Reply) -> Decision:
    return info("ors.body.unknown-keys", actual=f"/tasks with an unknown key: {reply.describe(80)}")


def note_version(reply: Reply) -> Decision:
    return info("ors.version.none", actual=reply.describe())


def task_count(reply: Reply) -> int | None:
    """The count a /num_tasks answer gives (a whole number, not a boolean), else None."""
    count = reply.body.get("num_tasks") if reply.status == 200 and isinstance(reply.body, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def judge_index_api(probes: Sequence[IndexProbe], answers: Sequence[Reply], source: str) -> Decision:
    """The index API's answers against what `source` (/tasks, or task(i) one by one) says they hold."""
    wrong = index_disagreements(list(probes), list(answers))
    expected = f"the index API agrees with {source}"
    return _problem("ors.tasks.index-api-consistent", "; ".join(wrong), expected, f"{len(probes)} answers agree")


def judge_tasks_by_index(count: Reply, tasks: Sequence[Reply]) -> Decision | None:
    """Without /tasks: a num_tasks whose task(i) answers are refused disagrees with itself (None when they answer)."""
    wrong = [f"task({i}): {reply.describe(60)}" for i, reply in enumerate(tasks) if reply.status != 200]
    if not wrong:
        return None
    return missed(
        "ors.tasks.index-api-consistent",
        expected=f"task(i) answers for every i below num_tasks ({count.describe(40)})",
        actual="; ".join(wrong),
    )


def judge_out_of_range(reply: Reply) -> Decision:
    expected = "a 4xx" if not server_error(reply) else "a 4xx, not a 5xx"
    return check(refused(reply), "ors.tasks.index-out-of-range", expected=expected, actual=reply.describe(80))


# -- HTTP API > Sessions; Sessions > 1-5


def judge_create_sessions(answers: Sequence[Reply], issued: Collection[str] = ()) -> list[Decision]:
    """create-session, its form and unique ids over `answers`, and against ids `issued` before them."""
    ids = [sid_of(reply) for reply in answers]
    sids = [sid for sid, _ in ids if sid]
    forms = sorted({form for sid, form in ids if sid})
    repeated = [sid for i, sid in enumerate(sids) if sid in issued or sid in sids[:i]]
    first = answers[0].describe(100) if answers else "no answer"
    return [
        check(
            len(sids) == len(ids),
            "ors.session.create-session",
            expected='JSON {"sid": str} or an SSE task_id event',
            actual=f"{len(sids)} of {len(ids)} answers carried an id; first: {first}",
        ),
        info("ors.session.create-session-form", actual=f"answered as {' and '.join(forms) or 'neither'}"),
        check(
            not repeated,
            "ors.session.create-session-unique",
            expected=f"{len(sids)} different ids",
            actual=f"{len(set(sids))} distinct of {len(sids)}" + (f"; {repeated[0]} again" if repeated else ""),
        ),
    ]


def judge_create(sid: str, reply: Reply) -> Decision:
    echoed = isinstance(reply.body, dict) and reply.body.get("sid") == sid
    held = reply.status == 200 and echoed
    return check(held, "ors.session.create", expected=f'200 {{"sid": "{sid}"}}', actual=reply.describe())


def judge_setup_blocking(prompt: Reply) -> Decision:
    waiting = prompt.status == 503 and bool(prompt.header_values("retry-after"))
    held = prompt.status == 200 or waiting
    return check(
        held, "ors.session.setup-blocking", expected="200, or 503 with Retry-After", actual=prompt.describe(80)
    )


def blocks_problem(value: Any) -> str:
    """Why `value` is not an ORS Blocks array ("" when it is)."""
    if not isinstance(value, list):
        return f"not an array: {summarize(value, 120)}"
    for i, block in enumerate(value):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            continue
        if kind == "image" and isinstance(block.get("data"), str) and isinstance(block.get("mimeType"), str):
            continue
        return f"block {i} is not a text or image block: {summarize(block, 120)}"
    return ""


def judge_prompt(reply: Reply) -> Decision:
    return _shape_of(reply, "ors.prompt.blocks", blocks_problem, "an array of text or image blocks")


def judge_create_duplicate(again: Reply) -> Decision:
    return check(refused(again), "ors.session.create-duplicate", expected="a 4xx", actual=again.describe())


def judge_one_source(both: Reply, neither: Reply) -> Decision:
    return check(
        refused(both) and refused(neither),
        "ors.session.create-exactly-one-source",
        expected="a 4xx for both task_spec and split+index, and for neither",
        actual=f"both: {both.describe(80)}; neither: {neither.describe(80)}",
    )


def note_client_minted(reply: Reply) -> Decision:
    return info("ors.session.client-minted-sid", actual=f"/create with an id this checker made: {reply.describe(80)}")


def judge_id_header(headless: dict[str, Reply]) -> Decision:
    """`headless`: route -> what it answered without X-Session-ID."""
    return _all_refused("ors.session.id-header", headless)


def judge_unknown_sid(unknown: dict[str, Reply]) -> Decision:
    """`unknown`: route -> what it answered for an id never created."""
    return _all_refused("ors.session.unknown-sid", unknown)


def judge_ping(reply: Reply) -> Decision:
    return check(_status_ok(reply), "ors.ping.ok", expected=f"{OK_BODY} on a live session", actual=reply.describe())


def judge_teardown(after: dict[str, Reply], deleted: Reply | None = None) -> Decision:
    """`after`: route -> what it answered for a deleted id; `deleted`: the /delete answer itself, when seen."""
    decision = _all_refused("ors.delete.teardown", after, "a 4xx after /delete")
    if deleted is not None and deleted.status >= 300:
        return missed("ors.delete.teardown", expected="/delete answers 2xx", actual=f"/delete {deleted.describe(60)}")
    return decision


def judge_delete_idempotent(twice: Reply, stranger: Reply) -> Decision:
    return check(
        not (server_error(twice) or server_error(stranger)),
        "ors.delete.idempotent",
        expected="no 5xx",
        actual=f"again: {twice.describe(60)}; unknown: {stranger.describe(60)}",
    )


def judge_delete_session(reply: Reply) -> Decision:
    if 200 <= reply.status < 300:
        return passed("ors.delete-session.ok", actual=reply.describe(60))
    if reply.status == 404:
        return info("ors.delete-session.ok", actual=f"404: a server of the older spec ({reply.describe(60)})")
    return missed("ors.delete-session.ok", expected="2xx", actual=reply.describe(60))


# -- Implementing a Server > Error Handling


def error_body_problem(reply: Reply) -> str:
    """Why a 4xx/5xx answer is not a JSON object with "detail" ("" when it is)."""
    if isinstance(reply.body, dict) and "detail" in reply.body:
        return ""
    return f"{reply.method} {reply.path}: {reply.describe(100)}"


def judge_error_bodies(replies: Sequence[Reply]) -> Decision:
    """Every 4xx and 5xx among `replies` is a JSON object with "detail"."""
    errors = [reply for reply in replies if reply.status >= 400]
    wrong = [problem for reply in errors if (problem := error_body_problem(reply))]
    fine = f"{len(errors)} error answers carry detail"
    return _problem("ors.errors.json-detail", "; ".join(wrong), 'a JSON object with "detail"', fine)


def judge_malformed_bodies(replies: Sequence[Reply]) -> Decision:
    """`replies`: answers to bodies that are not JSON; each a 4xx."""
    bad = [f"{reply.path}: {reply.describe(80)}" for reply in replies if not refused(reply)]
    return _problem("ors.errors.malformed-body", "; ".join(bad), "a 4xx", ", ".join(str(r.status) for r in replies))


# -- Overview > Session Timeout; Server-Sent Events > Why SSE


def judge_keepalive(arrivals: Sequence[float], limit: float, reply: Reply) -> Decision:
    """`arrivals`: when the request went out, then when each piece of the body came, then the end."""
    gap = max((b - a for a, b in zip(arrivals, arrivals[1:], strict=False)), default=0.0)
    expected = f"a byte at least every {limit:g}s"
    if gap <= limit:
        return passed("ors.call.keepalive", actual=f"longest silence {gap:.1f}s over {reply.elapsed:.1f}s")
    return missed("ors.call.keepalive", expected=expected, actual=f"{gap:.1f}s without a byte ({reply.describe(60)})")


def judge_idle_expiry(half_alive: bool | None, gone: bool, idle: float, margin: float) -> Decision:
    """`half_alive`: a session idle for idle/2 answered /ping; `gone`: one idle for idle + margin did not."""
    return check(
        bool(half_alive) and gone,
        "ors.session.idle-expiry",
        expected=f"alive after {idle / 2:g}s idle, gone after {idle + margin:g}s",
        actual=f"half-way alive: {half_alive}; gone at the end: {gone}",
    )


def judge_keeps_alive(prompt: Reply) -> Decision:
    return check(prompt.status == 200, "ors.ping.keeps-alive", expected="200 from /prompt", actual=prompt.describe(80))
