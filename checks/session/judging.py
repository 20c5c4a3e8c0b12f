"""What records, replies and trees must look like: each function returns the problems it finds, [] when none."""

from __future__ import annotations

import re
from typing import Any

from checks.core import summarize
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
