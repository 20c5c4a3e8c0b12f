"""What records, replies and trees must look like, as pure functions of what was observed.

The `*_problems` functions return the problems they find ([] when none). The judges of one exchange
(a /health, a POST /sessions, a DELETE, a GET of the records, a streamed chat) return `Decision`s; the tap
calls them on each exchange it copies, and `checks.session.judging_phases` decides a phase's clauses from
several exchanges with the same problem finders.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from checks.core import summarize
from checks.decision import Decision, check
from checks.http_client import Reply
from checks.session.agent import Step
from checks.session.facts import input_ids, message_of, metadata_of, output_ids, records_of
from checks.session.trajectory import same_message

HEX32 = re.compile(r"[0-9a-f]{32}")
HARD_MISMATCHES = {"special_token_count", "special_token_type", "non_assistant_text"}


def envelope_problems(records: list[dict[str, Any]]) -> list[str]:
    problems, last = [], float("-inf")
    for index, record in enumerate(records):
        stamp, asked = record.get("timestamp"), record.get("request_timestamp")
        if record.get("path") != "/v1/chat/completions" or record.get("status_code") != 200:
            problems.append(f"record {index}: path {record.get('path')!r}, status_code {record.get('status_code')!r}")
        if not isinstance(stamp, (int, float)) or (asked is not None and not isinstance(asked, (int, float))):
            problems.append(f"record {index}: timestamps {asked!r}, {stamp!r}")
            continue
        if asked is not None and asked > stamp:
            problems.append(f"record {index}: request_timestamp {asked} after timestamp {stamp}")
        if stamp < last:
            problems.append(f"record {index}: timestamp {stamp} before the previous record's {last}")
        last = stamp
    return problems


def record_reply_problems(step: Step, record: dict[str, Any]) -> list[str]:
    problems = []
    reply_id = (step.reply.body or {}).get("id")
    if (record.get("response") or {}).get("id") != reply_id:
        problems.append(f"response.id {(record.get('response') or {}).get('id')!r} != reply id {reply_id!r}")
    recorded, seen = message_of(record.get("response")), message_of(step.reply.body)
    if (recorded.get("content") or "") != (seen.get("content") or ""):
        problems.append("the recorded content differs from the reply's")
    if _calls(recorded) != _calls(seen):
        problems.append(f"recorded tool calls {_calls(recorded)} != the reply's {_calls(seen)}")
    sent = step.request["messages"]
    kept = (record.get("request") or {}).get("messages")
    if not isinstance(kept, list) or len(kept) != len(sent) or not all(map(same_message, kept, sent)):
        problems.append("request.messages differs from the messages sent")
    return problems


def _calls(message: dict[str, Any]) -> list[tuple[Any, Any, Any]]:
    return [
        (c.get("id"), (c.get("function") or {}).get("name"), (c.get("function") or {}).get("arguments"))
        for c in message.get("tool_calls") or []
        if isinstance(c, dict)
    ]


def tito_problems(records: list[dict[str, Any]], metadata: dict[str, Any]) -> list[str]:
    problems = []
    trim = int(metadata["max_trim_tokens"]) if isinstance(metadata.get("max_trim_tokens"), int) else 0
    for index, record in enumerate(records):
        meta = ((record.get("response") or {}).get("choices") or [{}])[0].get("meta_info") or {}
        if len(output_ids(record)) != meta.get("completion_tokens"):
            problems.append(
                f"record {index}: {len(output_ids(record))} output logprobs, "
                f"completion_tokens {meta.get('completion_tokens')!r}"
            )
        if index:
            before = input_ids(records[index - 1]) + output_ids(records[index - 1])
            head = input_ids(record)[: len(before)]
            cut = len(before) - trim
            if head[:cut] != before[:cut]:
                problems.append(f"record {index - 1}'s input+output ids are not a prefix of record {index}'s input_ids")
    if records:
        last = input_ids(records[-1]) + output_ids(records[-1])
        if metadata.get("accumulated_token_ids") != last:
            problems.append("accumulated_token_ids != the last record's input+output ids")
    hard = [
        m
        for m in metadata.get("tito_session_mismatch") or []
        if isinstance(m, dict) and m.get("type") in HARD_MISMATCHES
    ]
    if hard:
        problems.append(f"tito_session_mismatch holds hard mismatches: {summarize(hard, 120)}")
    return problems


def forced_field_problems(records: list[dict[str, Any]]) -> list[str]:
    problems = []
    for index, record in enumerate(records):
        request = record.get("request") or {}
        missing = [key for key in ("input_ids",) if not isinstance(request.get(key), list)]
        missing += [key for key in ("logprobs", "return_meta_info") if request.get(key) is not True]
        if missing or "stream" in request:
            problems.append(f"record {index}: missing {missing}" + (", stream kept" if "stream" in request else ""))
    return problems


def tool_id_problems(records: list[dict[str, Any]]) -> list[str]:
    problems = []
    for index in range(1, len(records)):
        called = {c[0] for c in _calls(message_of(records[index - 1].get("response")))}
        messages = (records[index].get("request") or {}).get("messages") or []
        tail = messages[len((records[index - 1].get("request") or {}).get("messages") or []) + 1 :]
        for message in tail:
            if (
                isinstance(message, dict)
                and message.get("role") == "tool"
                and message.get("tool_call_id") not in called
            ):
                problems.append(
                    f"record {index}: tool_call_id {message.get('tool_call_id')!r} "
                    f"is none of {sorted(map(str, called))}"
                )
    return problems


def tree_problems(
    steps: list[Step], expected_tree: list[tuple[int, int | None]], expected_leaves: list[tuple[int, list[int]]]
) -> list[str]:
    snapshot = steps[-1].snapshot
    tree = metadata_of(snapshot).get("tree")
    if not isinstance(tree, dict):
        return ["GET metadata has no tree"]
    nodes = [n for n in tree.get("nodes") or [] if isinstance(n, dict)]
    problems = []
    pairs = [(n.get("id"), n.get("parent")) for n in nodes]
    if pairs != expected_tree:
        problems.append(f"nodes (id, parent) {pairs}, expected {expected_tree}")
    leaves = [
        (leaf.get("node_id"), leaf.get("path_node_ids")) for leaf in tree.get("leaves") or [] if isinstance(leaf, dict)
    ]
    if leaves != expected_leaves:
        problems.append(f"leaves {leaves}, expected {expected_leaves}")
    replies = [(s.reply.body or {}).get("id") for s in steps]
    ids = [n.get("response_id") for n in nodes]
    if ids != replies[: len(ids)]:
        problems.append("node response_ids differ from the reply ids in commit order")
    active = dict(leaves).get(expected_leaves[-1][0]) or []
    path_ids = [ids[i] for i in active if isinstance(i, int) and i < len(ids)]
    recorded = [(r.get("response") or {}).get("id") for r in records_of(snapshot)]
    if recorded != path_ids:
        problems.append(f"records are not the active path {active}: {len(recorded)} records")
    return problems


def not_found(reply: Reply) -> bool:
    message = reply.error_message()
    return reply.status == 404 and message is not None and message.startswith("session not found")


# ---------------------------------------------------------------- one exchange at a time


def health_reply(reply: Reply, instance_seen: str | None) -> Decision:
    """SS-01: one GET /health, after the instance id earlier ones gave (`instance_seen`, None: none yet)."""
    body = reply.body if isinstance(reply.body, dict) else {}
    instance = body.get("session_server_instance_id")
    problem = "" if reply.status == 200 and body.get("status") == "ok" else f"answered {reply.describe(120)}"
    if instance is not None and not (isinstance(instance, str) and HEX32.fullmatch(instance)):
        problem = problem or f"session_server_instance_id {instance!r} is not 32 hex characters"
    elif instance is not None and instance_seen not in (None, instance):
        problem = problem or f"session_server_instance_id changed from {instance_seen} to {instance}"
    expected = '200 {"status": "ok"}, the same 32-hex session_server_instance_id if any'
    return check(not problem, "session.ss01.health", expected=expected, actual=problem or reply.describe(120))


def create_reply(reply: Reply, created: Collection[str]) -> Decision:
    """SS-02: one POST /sessions, after the ids given out before (`created`)."""
    sid = reply.body.get("session_id") if isinstance(reply.body, dict) else None
    problem = "" if reply.status == 200 else f"answered {reply.describe(120)}"
    if not problem and not (isinstance(sid, str) and HEX32.fullmatch(sid)):
        problem = f"session_id {sid!r} is not 32 hex characters"
    elif not problem and sid in created:
        problem = f"session_id {sid} was given out before"
    expected = '200 {"session_id": <32 hex>}, a new id each time'
    return check(not problem, "session.ss02.create", expected=expected, actual=problem or f"session {sid}")


def new_session_records(snapshot: Reply) -> Decision:
    """SS-02: a GET of a session nobody has chatted in yet lists no records."""
    held = isinstance(snapshot.body, dict) and snapshot.body.get("records") == []
    actual = f"{len(records_of(snapshot))} records" if not held else "no records"
    return check(held, "session.ss02.create", expected="a new session lists no records", actual=actual)


def delete_reply(reply: Reply) -> Decision:
    """SS-03: a DELETE of a session answers 204 with an empty body."""
    held = reply.status == 204 and not reply.raw
    return check(held, "session.ss03.lifecycle", expected="204 with an empty body", actual=reply.describe(120))


def gone_reply(method: str, path: str, reply: Reply) -> Decision:
    """SS-03: a request on a session asked after its DELETE was answered."""
    expected = f'{method} {path} after its DELETE: 404 {{"error": "session not found: ..."}}'
    return check(not_found(reply), "session.ss03.lifecycle", expected=expected, actual=reply.describe(120))


def _problems(clause_id: str, problems: list[str], expected: str, fine: str) -> Decision:
    return check(not problems, clause_id, expected=expected, actual="; ".join(problems[:3]) or fine)


def records_held(records: list[dict[str, Any]], metadata: dict[str, Any]) -> list[Decision]:
    """SS-04, SS-06, SS-07 and SS-14 on one GET of a session's records, whatever calls made them."""
    return [
        _problems(
            "session.ss04.one-record-per-call",
            envelope_problems(records),
            "records of /v1/chat/completions, 200, in time order",
            "in order",
        ),
        _problems("session.ss06.tito", tito_problems(records, metadata), "TITO from records alone", "held"),
        _problems("session.ss07.forced-fields", forced_field_problems(records), "input_ids, logprobs, meta", "set"),
        _problems("session.ss14.tool-call-ids", tool_id_problems(records), "tool_call_ids name calls", "named"),
    ]


def records_match_replies(matched: list[tuple[Step, dict[str, Any]]]) -> Decision:
    """SS-05: records of calls whose replies were seen (each call beside its record)."""
    problems = [p for step, record in matched for p in record_reply_problems(step, record)]
    return _problems("session.ss05.record-matches-reply", problems, "records hold what the agent saw", "they do")


def stream_done(done: bool) -> Decision:
    """SS-07: a streamed chat's SSE ends in [DONE]."""
    return check(done, "session.ss07.forced-fields", expected="SSE ending in [DONE]", actual=f"[DONE]: {done}")
