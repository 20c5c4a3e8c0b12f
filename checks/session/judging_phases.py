"""The judges of what one phase of the session-server suite observes: several calls and the records
after them, deciding one clause each.

Pure functions, as in `checks.session.judging` (whose problem finders they use): observations in,
`Decision`s out; the phase records each beside its witness (`checks.session.witness`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.decision import Decision, check, info, missed
from checks.http_client import Reply
from checks.session.agent import EXPECTED_LEAVES, EXPECTED_RECORDS, EXPECTED_TREE, Step
from checks.session.facts import output_logprobs, records_of
from checks.session.judging import (
    HEX32,
    envelope_problems,
    forced_field_problems,
    not_found,
    record_reply_problems,
    tito_problems,
    tool_id_problems,
)
from checks.session.samples import EMPTY_REASONS, WireSample

# ---------------------------------------------------------------- the phases' clauses, decided


def no_problems(clause_id: str, problems: list[str], *, expected: str) -> Decision:
    """The clause holds where no problem was found; else its problems are what was seen."""
    return check(not problems, clause_id, expected=expected, actual="; ".join(problems) or "as expected")


def health(first: Reply, second: Reply) -> Decision:
    """SS-01: two GET /health replies: 200 {"status": "ok"}, the same 32-hex instance id if any."""
    bodies = [r.body if isinstance(r.body, dict) else {} for r in (first, second)]
    ids = [b.get("session_server_instance_id") for b in bodies]
    ok = all(r.status == 200 and b.get("status") == "ok" for r, b in zip((first, second), bodies, strict=True))
    id_ok = ids[0] is None or (isinstance(ids[0], str) and HEX32.fullmatch(ids[0]) is not None and ids[0] == ids[1])
    return check(
        ok and id_ok,
        "session.ss01.health",
        expected='200 {"status": "ok"} twice, with the same 32-hex session_server_instance_id if any',
        actual=f"{first.describe()}; then {second.describe()}",
    )


def created(creates: list[Reply], fresh: Reply | None) -> Decision:
    """SS-02: POST /sessions replies, and the GET of the first new session (None: no id to read)."""
    ids = session_ids(creates)
    shaped = all(r.status == 200 for r in creates) and all(isinstance(i, str) and HEX32.fullmatch(i) for i in ids)
    empty = fresh is not None and fresh.status == 200 and (fresh.body or {}).get("records") == []
    return check(
        shaped and len(set(ids)) == len(ids) and empty,
        "session.ss02.create",
        expected=f'{len(ids)} x 200 {{"session_id": <32 hex>}}, all different; GET of a new one lists records []',
        actual=f"ids {ids[:4]}{'…' if len(ids) > 4 else ''}; {len(set(map(str, ids)))} distinct; GET: "
        + (fresh.describe() if fresh else "not sent"),
    )


def session_ids(creates: list[Reply]) -> list[Any]:
    return [r.body.get("session_id") if isinstance(r.body, dict) else None for r in creates]


def deleted_then_gone(deleted: Reply, after: dict[str, Reply]) -> Decision:
    """SS-03: a DELETE's reply, then what each later request (by name) on the deleted session got."""
    wrong = {name: r.describe(120) for name, r in after.items() if not not_found(r)}
    return check(
        deleted.status == 204 and not deleted.raw and not wrong,
        "session.ss03.lifecycle",
        expected="DELETE 204 with no body; then GET, DELETE, chat, samples and an unknown id: "
        '404 {"error": "session not found: ..."}',
        actual=f"DELETE {deleted.describe(80)}; "
        + ("; ".join(f"{k}: {v}" for k, v in wrong.items()) or "all 404 as expected"),
    )


def failed_not_recorded(failed: Reply, after_failure: list[Any], retry: Reply, after_retry: list[Any]) -> Decision:
    """SS-08: an oversized first turn and the records after it; the next first turn and the records after it."""
    ok = 400 <= failed.status < 500 and not after_failure and retry.status == 200 and len(after_retry) == 1
    return check(
        ok,
        "session.ss08.failed-not-recorded",
        expected="the oversized turn: a 4xx and no record; the next first turn: 200 and one record",
        actual=f"oversized: {failed.describe(160)}, then {len(after_failure)} records; "
        f"next turn: {retry.describe(120)}, then {len(after_retry)} records",
    )


def turn_failed(clause_id: str, bad: Step, every_turn: bool) -> Decision:
    """A turn of the agent's schedule did not get its 200 (the turns after it were not sent)."""
    if every_turn:
        return missed(
            clause_id, expected="200 for every turn of the weather agent", actual=f"{bad.event}: {bad.reply.describe()}"
        )
    return missed(clause_id, expected=f"200 for {bad.event}", actual=bad.reply.describe())


def one_record_per_call(steps: list[Step], records: list[dict[str, Any]]) -> Decision:
    """SS-04: the records after the agent's calls: one per call, each envelope as miles writes it."""
    problems = envelope_problems(records)
    return check(
        len(records) == len(steps) and not problems,
        "session.ss04.one-record-per-call",
        expected=f"{len(steps)} records (one per call, the streamed one too), path /v1/chat/completions, "
        "status 200, ordered timestamps",
        actual=f"{len(records)} records; {'; '.join(problems) or 'envelopes as expected'}",
    )


def record_matches_reply(step: Step, record: dict[str, Any]) -> Decision:
    """SS-05: the record of a call holds the reply the agent got and the messages it sent."""
    mismatch = record_reply_problems(step, record)
    return no_problems(
        "session.ss05.record-matches-reply",
        mismatch,
        expected=f"the record of {step.event} holds the reply's id, message and the messages sent",
    )


def tito(records: list[dict[str, Any]], metadata: dict[str, Any]) -> Decision:
    """SS-06: token ids across the records and the session's metadata."""
    problems = tito_problems(records, metadata)
    return no_problems(
        "session.ss06.tito",
        problems,
        expected="prefix-stable token ids across records, logprob counts equal completion_tokens, "
        "accumulated ids = last record's",
    )


def forced_fields(records: list[dict[str, Any]], streamed: Step) -> Decision:
    """SS-07: the fields the server forces on recorded requests, and the reply to a streamed call."""
    forced = forced_field_problems(records)
    stream_info = (streamed.reply.body or {}).get("stream") or {}
    streamed_ok = streamed.reply.content_type.startswith("text/event-stream") and stream_info.get("done") is True
    return check(
        not forced and streamed_ok,
        "session.ss07.forced-fields",
        expected="recorded requests carry input_ids, logprobs true, return_meta_info true, no stream; "
        "stream:true gives SSE ending in [DONE]",
        actual=f"{'; '.join(forced) or 'recorded requests as expected'}; "
        f"streamed call: {streamed.reply.content_type!r}, {stream_info}",
    )


def tool_call_ids(records: list[dict[str, Any]]) -> Decision:
    """SS-14: each recorded tool message names a call of the previous recorded reply."""
    problems = tool_id_problems(records)
    return no_problems(
        "session.ss14.tool-call-ids",
        problems,
        expected="each recorded tool message's tool_call_id names a call of the previous recorded reply",
    )


def nonce_turn_problem(nonce: str, turn: int, reply: Reply) -> str | None:
    """SS-11: a turn of a nonce session that did not get a chat completion."""
    if reply.status != 200 or not isinstance(reply.body, dict):
        return f"{nonce} turn {turn}: {reply.describe(120)}"
    return None


def nonce_records_problem(nonce: str, records: list[dict[str, Any]]) -> str | None:
    """SS-11: a session's two records after its two turns, each carrying the session's nonce."""
    texts = [str((r.get("request") or {}).get("messages")) + str(r.get("response")) for r in records]
    foreign = [t for t in texts if nonce not in t]
    if len(records) != 2 or foreign:
        return f"session of {nonce}: {len(records)} records, {len(foreign)} without its nonce"
    return None


def sibling_problems(chats: list[Reply], snapshot: Reply, mode: str) -> list[str]:
    """SS-11: an opening chat and two concurrent chats from its reply, then the session: two siblings."""
    if any(r.status != 200 for r in chats):
        return [f"sibling chats: {[r.status for r in chats]}"]
    if mode == "v2":
        nodes = (snapshot.body.get("metadata") or {}).get("tree", {}).get("nodes") or []
        if [(n.get("id"), n.get("parent")) for n in nodes] != [(0, None), (1, 0), (2, 0)]:
            return [f"two chats from node 0 gave nodes {[(n.get('id'), n.get('parent')) for n in nodes]}"]
        return []
    records = records_of(snapshot)
    if len(records) != 2:
        return [f"two concurrent chats from one parent left {len(records)} records, expected 2"]
    return []


def delete_in_flight_problem(deleted: Reply, chat: Reply, gone: Reply) -> str | None:
    """SS-11: a DELETE while a chat is in flight: 204, the chat no 5xx, then a 404."""
    if deleted.status != 204 or chat.status >= 500 or gone.status != 404:
        return f"delete in flight: DELETE {deleted.status}, chat {chat.status}, GET after {gone.status}"
    return None


def concurrency(problems: list[str], sessions: int, mode: str) -> Decision:
    return no_problems(
        "session.ss11.concurrency",
        problems,
        expected=f"{sessions} parallel sessions each holding only its nonce; concurrent chats: "
        + ("two sibling nodes" if mode == "v2" else "one new record")
        + "; DELETE in flight 204, chat not 5xx, then 404",
    )


def linear_problems(steps: list[Step]) -> tuple[list[str], int | None]:
    """SS-09 v1: each retry keeps the record count and replaces the last record with the retry's.

    Also the index of the first step that went wrong (None when none did).
    """
    problems: list[str] = []
    first_wrong = None
    for index, (before, step) in enumerate(zip(steps, steps[1:], strict=False), 1):
        records = records_of(step.snapshot)
        if step.event == "rollback":
            if len(records) != len(records_of(before.snapshot)):
                problems.append(f"{step.event}: {len(records)} records, was {len(records_of(before.snapshot))}")
            last = (records[-1].get("response") or {}).get("id") if records else None
            if last != (step.reply.body or {}).get("id"):
                problems.append(f"{step.event}: the last record is not the retry's reply {last!r}")
            if problems and first_wrong is None:
                first_wrong = index
    return problems, first_wrong


def record_count_problems(records: list[dict[str, Any]]) -> list[str]:
    return [] if len(records) == EXPECTED_RECORDS else [f"{len(records)} records, expected {EXPECTED_RECORDS}"]


def deep_divergence_problem(refused: Reply, unchanged: list[dict[str, Any]], final: list[dict[str, Any]]) -> str | None:
    """SS-09 v1: a history diverging seven generations deep is refused with 400 and changes no record."""
    ids = [r.get("response", {}).get("id") for r in unchanged]
    if refused.status != 400 or ids != [r.get("response", {}).get("id") for r in final]:
        return f"a divergence 7 generations deep: {refused.describe(160)}, then {len(unchanged)} records"
    return None


def extension_problem(extended: Reply) -> str | None:
    """SS-09 v1: the stored history, extended after the refused divergence, is still served."""
    return None if extended.status == 200 else f"extending the stored history afterwards: {extended.describe(120)}"


def retry_topology(problems: list[str], mode: str) -> Decision:
    return no_problems(
        "session.ss09.retry-topology",
        problems,
        expected=f"{mode}: {EXPECTED_RECORDS} records on the active path"
        + (
            f", tree {EXPECTED_TREE}, leaves {EXPECTED_LEAVES}"
            if mode == "v2"
            else ", retries replace the last record, deep divergence 400"
        ),
    )


def truncated(cut: Reply) -> Decision | None:
    """SS-10: a generation asked to stop at max_tokens 3; `info` not judged when it was not cut (None: it was)."""
    message = (cut.body or {}).get("choices", [{}])[0] if isinstance(cut.body, dict) else {}
    if cut.status != 200 or message.get("finish_reason") != "length":
        return info("session.ss10.truncation", actual=f"not judged: max_tokens 3 gave {cut.describe(160)}")
    return None


def truncation(extend: Reply, branch: Reply, mode: str) -> Decision:
    """SS-10: extending a truncated generation (409 in v2, 200 in v1), and a branch before it (200)."""
    want = 409 if mode == "v2" else 200
    return check(
        extend.status == want and branch.status == 200,
        "session.ss10.truncation",
        expected=f"{mode}: extending the truncated generation {want}, a branch before it 200",
        actual=f"extend: {extend.describe(160)}; branch: {branch.describe(80)}",
    )


# ---------------------------------------------------------------- SS-12, /samples

Decoded = tuple[list[WireSample], dict[str, object]] | str  # the samples and their meta, or why there are none


def sample_problems(sample: WireSample, records: list[dict[str, object]], accumulated: object) -> list[str]:
    length = sample.fields.get("response_length")
    tokens, mask, log_probs = (sample.tensors[k] for k in ("tokens", "loss_mask", "rollout_log_probs"))
    problems = []
    if not isinstance(length, int) or len(mask) != length or len(log_probs) != length:
        return [f"response_length {length!r}, loss_mask {len(mask)}, rollout_log_probs {len(log_probs)}"]
    if tokens.ndim != 1 or tokens.tolist() != accumulated:
        problems.append("tokens are not the session's accumulated_token_ids (prompt then response)")
    recorded = np.asarray([lp for r in records for lp in output_logprobs(r)], dtype=np.float64)
    trained = log_probs[mask == 1]
    if trained.tobytes() != recorded.tobytes():
        as32 = trained.astype(np.float32).astype(np.float64).tobytes() == trained.tobytes()
        problems.append(
            "logprobs under the loss mask differ from the records' bit for bit "
            f"({len(trained)} vs {len(recorded)} values"
            + (
                ", and every sample value is float32-representable: rounded through float32"
                if as32 and len(trained)
                else ""
            )
            + f"); first sample values {trained[:3].tolist()}, records {recorded[:3].tolist()}"
        )
    return problems


def full_samples_problems(full: Decoded, records: list[dict[str, object]], accumulated: object) -> list[str]:
    """/samples of a two-turn session: one sample, empty_reason null, matching the session's records."""
    if isinstance(full, str):
        return [f"a two-turn session: {full}"]
    samples, meta = full
    problems = []
    if len(samples) != 1 or meta.get("empty_reason") is not None:
        problems.append(f"{len(samples)} samples, empty_reason {meta.get('empty_reason')!r}; expected 1 and null")
    for sample in samples[:1]:
        problems += sample_problems(sample, records, accumulated)
    return problems


def all_truncated_problem(short: Decoded) -> str | None:
    """/samples with a max_seq_len shorter than the first prompt: no samples, empty_reason all_truncated."""
    if isinstance(short, str) or short[1].get("empty_reason") != "all_truncated" or short[0]:
        found = short if isinstance(short, str) else short[1].get("empty_reason")
        return f"max_seq_len 1: {found!r}, expected all_truncated"
    return None


def no_records_problem(empty: Decoded) -> str | None:
    """/samples of a session with no records: no samples, empty_reason no_records."""
    if isinstance(empty, str) or empty[1].get("empty_reason") != "no_records" or empty[0]:
        return f"no records: {empty if isinstance(empty, str) else empty[1].get('empty_reason')!r}, expected no_records"
    if empty[1].get("empty_reason") not in EMPTY_REASONS:
        return f"empty_reason {empty[1].get('empty_reason')!r}"
    return None


def samples(problems: list[str]) -> Decision:
    return no_problems(
        "session.ss12.samples",
        problems,
        expected="safetensors with _samples_meta, pinned dtypes and lengths, "
        "logprobs equal to the records' bit for bit, no_records and all_truncated where due",
    )
