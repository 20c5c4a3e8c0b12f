"""The openai-chat message rules: a recorded reply (or exchange) in, clause decisions out.

Each judge reads `Reply` / `StreamReply` values as the shared HTTP client
records them, and returns `Decision`s with their expected and actual; none
touches the network or the report, so the phases, a parity script and a
recorded transcript are judged alike. The body-level rules they build on are
in `shapes` (one reply's JSON) and `sse` (one stream's chunks).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from checks.decision import Decision, check, check_problems, error, info, missed
from checks.http_client import Reply, StreamReply
from checks.openai.requests import UNICODE_TEXT
from checks.openai.shapes import (
    FINISH_REASONS,
    chat_problems,
    comparable,
    completion_tokens,
    error_shape_problem,
    finish_reasons,
    first_choice,
    logprob_problems,
    message_of,
    token_logprobs,
    usage_problems,
)
from checks.openai.sse import assembled, stream_format_problems, usage_chunk_problems

NONCE = re.compile(r"n[0-9a-f]{10}")


def content_of(body: Any) -> str:
    return str(message_of(body).get("content") or "")


def refused_as_json(reply: Reply) -> bool:
    """A 4xx with a JSON body: how a target refuses a request it will not serve."""
    return 400 <= reply.status < 500 and reply.is_json


def refused_note(reply: Reply) -> str:
    """Why a clause about what a served request gets is not judged on a refused one."""
    return f"not judged: the request was refused ({reply.describe(160)})"


def stream_refusal(stream: StreamReply) -> Reply | None:
    """The 4xx JSON error a target answered a stream request with, if it refused it."""
    refusal = stream.error_reply
    return refusal if refusal is not None and refused_as_json(refusal) else None


# -- GET /models and plain chats


def models_listed(reply: Reply) -> Decision:
    body = reply.body if isinstance(reply.body, dict) else {}
    data = body.get("data")
    entries_ok = isinstance(data, list) and all(
        isinstance(e, dict) and isinstance(e.get("id"), str) and e.get("object") == "model" for e in data
    )
    return check(
        reply.status == 200 and body.get("object") == "list" and entries_ok,
        "openai.models.list",
        expected='200 {"object": "list", "data": [{"id": str, "object": "model"}, ...]}',
        actual=reply.describe(),
    )


def listed_model_answers(reply: Reply, model: str) -> Decision:
    return check(
        reply.status == 200,
        "openai.models.list",
        expected=f"a chat naming model {model!r} is answered 200",
        actual=reply.describe(),
    )


def chat_shape(reply: Reply) -> Decision:
    problems = chat_problems(reply.body) if reply.status == 200 else [f"status {reply.status}"]
    if not reply.content_type.startswith("application/json"):
        problems.append(f"content-type {reply.content_type!r}")
    return check_problems(
        problems,
        "openai.chat.shape",
        expected="200 application/json chat.completion with id, created, model, choices[0]",
        fine=reply.describe(),
    )


def hygiene_problems(reply: Reply) -> list[str]:
    """OA-16 on one reply: repeated headers, a content-length that is not the body's."""
    problems = []
    if len(reply.header_values("content-type")) != 1:
        problems.append(f"{len(reply.header_values('content-type'))} content-type headers")
    for name in ("server", "date"):
        if len(reply.header_values(name)) > 1:
            problems.append(f"{len(reply.header_values(name))} {name} headers")
    lengths = reply.header_values("content-length")
    if len(lengths) > 1:
        problems.append(f"{len(lengths)} content-length headers")
    elif lengths and lengths[0].strip() != str(reply.raw_size):
        problems.append(f"content-length {lengths[0]} but {reply.raw_size} bytes came")
    elif not lengths and "chunked" not in ",".join(reply.header_values("transfer-encoding")):
        problems.append("neither content-length nor chunked encoding")
    return problems


def reply_rules(reply: Reply, *, max_tokens: int | None, honours_max_tokens: bool) -> list[Decision]:
    """What every 200 chat reply must hold: finish reasons, usage, header hygiene (`REPLY_CLAUSES`).

    `within-max-tokens` is left out when there is nothing to compare, and out of these
    decisions when the profile says max_tokens is not honoured (the phase says so itself)."""
    reasons = finish_reasons(reply.body)
    decisions = [
        check(
            bool(reasons) and all(r in FINISH_REASONS for r in reasons),
            "openai.chat.finish-reason",
            expected=" | ".join(sorted(FINISH_REASONS)),
            actual=f"finish_reason {reasons}",
        )
    ]
    problems = usage_problems(reply.body)
    decisions.append(
        check(
            not problems,
            "openai.usage.consistent",
            expected="non-negative integer usage with total = prompt + completion",
            # only read once usage_problems found the body an object
            actual="; ".join(problems) or str(reply.body.get("usage")),
        )
    )
    tokens = completion_tokens(reply.body)
    if max_tokens is not None and tokens is not None and honours_max_tokens:
        decisions.append(
            check(
                tokens <= max_tokens,
                "openai.usage.within-max-tokens",
                expected=f"completion_tokens <= max_tokens {max_tokens}",
                actual=f"completion_tokens {tokens}",
            )
        )
    hygiene = hygiene_problems(reply)
    decisions.append(
        check(
            not hygiene,
            "openai.http.hygiene",
            expected="one content-type, at most one server and date, a true content-length or chunked",
            actual="; ".join(hygiene) or "headers fine",
        )
    )
    return decisions


def max_tokens_compared(reply: Reply, max_tokens: int | None) -> bool:
    """Whether `reply_rules` has a completion_tokens figure to hold against `max_tokens`."""
    return max_tokens is not None and completion_tokens(reply.body) is not None


def prompt_stable(first: Reply, again: Reply) -> Decision:
    counts = [(r.body.get("usage") or {}).get("prompt_tokens") for r in (first, again)]
    return check(
        counts[0] == counts[1],
        "openai.usage.prompt-stable",
        expected="the same prompt_tokens for the same prompt",
        actual=f"prompt_tokens {counts[0]} then {counts[1]}",
    )


def max_tokens_cut(reply: Reply) -> Decision:
    """The reply to max_tokens 1: 200 with finish_reason length."""
    if reply.status != 200:
        return missed("openai.limits.max-tokens", expected="200 with finish_reason length", actual=reply.describe())
    reason = first_choice(reply.body).get("finish_reason")
    return check(
        reason == "length",
        "openai.limits.max-tokens",
        expected="finish_reason length after max_tokens 1",
        actual=f"finish_reason {reason!r}, content {content_of(reply.body)!r}",
    )


def two_choices(reply: Reply) -> Decision:
    choices = reply.body.get("choices") if reply.status == 200 and isinstance(reply.body, dict) else None
    indices = [c.get("index") for c in choices if isinstance(c, dict)] if isinstance(choices, list) else None
    return check(
        indices == [0, 1] or refused_as_json(reply),
        "openai.chat.n-choices",
        expected="two choices with indices 0 and 1, or a 4xx JSON error",
        actual=f"indices {indices}" if indices is not None else reply.describe(),
    )


def unicode_problems(text: str) -> list[str]:
    """What is wrong with the text an echoing target repeated."""
    if "\ufffd" in text:
        return [f"replacement characters in {text[:120]!r}"]
    if UNICODE_TEXT not in text:
        return [f"the repeated text differs: {text[:120]!r}"]
    return []


# A replacement character a model wrote itself is its own text; only a repeat shows mangling.
NOT_ECHOING = "not judged: the target was not shown to repeat what it is asked to repeat"


def unicode_round_trip(reply: Reply, echoing: bool) -> Decision:
    if not echoing:
        return info("openai.unicode.round-trip", actual=NOT_ECHOING)
    problems = unicode_problems(content_of(reply.body)) if reply.status == 200 else [reply.describe()]
    return check_problems(
        problems,
        "openai.unicode.round-trip",
        expected="UTF-8 intact and the text repeated exactly",
        fine=reply.describe(),
    )


# -- logprobs, determinism, context


def logprobs_content(reply: Reply, top_k: int) -> Decision:
    problems = logprob_problems(reply.body, top_k) if reply.status == 200 else [reply.describe()]
    expected = f"one entry per token, finite logprob <= 0, <= {top_k} descending top_logprobs"
    return check_problems(problems, "openai.logprobs.content", expected=expected, fine="well formed")


def logprobs_absent(reply: Reply) -> Decision:
    logprobs = first_choice(reply.body).get("logprobs")
    return check(
        reply.status == 200 and logprobs is None,
        "openai.logprobs.absent-unless-asked",
        expected="no choices[0].logprobs without logprobs in the request",
        actual=f"status {reply.status}, logprobs {str(logprobs)[:120]}",
    )


def context_overflow(reply: Reply, window: int) -> Decision:
    reason = first_choice(reply.body).get("finish_reason") if reply.status == 200 else None
    return check(
        refused_as_json(reply) or reason == "length",
        "openai.limits.context-overflow",
        expected=f"a prompt of ~{window * 3 // 2} tokens: a 4xx JSON error or finish_reason length",
        actual=reply.describe() if reply.status != 200 else f"200 with finish_reason {reason!r}",
    )


# -- streams


def stream_format(stream: StreamReply, what: str, twin: Reply | None = None) -> Decision:
    """One stream's format. A 4xx JSON refusal is not a stream: unjudged, unless its non-stream `twin`
    (the same request without stream) was answered, which shows the target refuses to stream it."""
    refusal = stream_refusal(stream)
    if refusal is not None and (twin is None or twin.status != 200):
        return info("openai.stream.format", actual=f"{what}: {refused_note(refusal)}")
    problems = stream_format_problems(stream)
    if refusal is not None:
        problems = [f"refused as a stream ({refusal.describe(160)}) though answered 200 without stream"]
    return check(
        not problems,
        "openai.stream.format",
        expected="SSE chat.completion.chunk events, role first, one finish_reason, [DONE] last",
        actual=f"{what}: " + ("; ".join(problems) or f"{len(stream.payloads)} chunks"),
    )


def usage_chunk(stream: StreamReply, *, asked: bool) -> Decision:
    if stream.status != 200 or stream.problem or not stream.chunks():
        # No stream came: there is nothing to hold to the rule (stream.format judges the stream itself).
        shown = stream.problem or (stream.error_reply.describe() if stream.error_reply else f"status {stream.status}")
        return info("openai.stream.usage-chunk", actual=f"not judged: no chunks came ({shown})")
    problems = usage_chunk_problems(stream, asked=asked)
    if asked:
        expected, fine = "one last chunk with choices [] and usage", "as expected"
    else:
        expected, fine = "no usage chunk without stream_options.include_usage", "none"
    return check_problems(problems, "openai.stream.usage-chunk", expected=expected, fine=fine)


def stream_equivalent(before: Reply, stream: StreamReply, after: Reply, what: str) -> Decision:
    """The streamed message against the JSON replies around it (unjudged when those failed, were
    refused, or no readable stream came)."""
    clause_id = "openai.stream.equivalent"
    for json_reply in (before, after):
        if refused_as_json(json_reply):
            return info(clause_id, actual=f"{what}: {refused_note(json_reply)}")
    if before.status != 200 or after.status != 200:
        return error(clause_id, f"{what}: the JSON replies failed: {before.describe()}")
    chunks = stream.chunks()
    if stream.status != 200 or stream.problem or stream.error_reply is not None or not chunks or None in chunks:
        shown = stream.problem or (stream.error_reply.describe(160) if stream.error_reply else "")
        return info(clause_id, actual=f"not judged: no readable stream of chunks came ({what}) {shown}".strip())
    if comparable(before.body) != comparable(after.body):
        return info(
            clause_id, actual=f"not judged, because two JSON replies to the same seeded request differ ({what})"
        )
    streamed, expected = assembled(stream), comparable(before.body)
    same = streamed == expected or without_undecodable(streamed) == without_undecodable(expected)
    return check(same, clause_id, expected=f"{what}: {expected}", actual=f"streamed: {streamed}")


def without_undecodable(message: dict[str, Any]) -> dict[str, Any]:
    """A message with its U+FFFD removed. They stand for generated bytes that are no UTF-8 text
    (a model may end on half a character); whether a stream shows such bytes one at a time, holds
    back a dangling part or renders it as one U+FFFD is no difference of the text itself (mangled
    text is judged by openai.unicode.round-trip)."""
    return {**message, "content": str(message.get("content") or "").replace("\ufffd", "")}


def stream_unicode(stream: StreamReply, echoing: bool) -> Decision:
    if not echoing:
        return info("openai.unicode.round-trip", actual=NOT_ECHOING + " (SSE)")
    text = str(assembled(stream)["content"])
    problems = [stream.problem or f"status {stream.status}"] if stream.status != 200 or stream.problem else []
    problems = problems or unicode_problems(text)
    return check_problems(problems, "openai.unicode.round-trip", expected="UTF-8 intact in SSE deltas", fine=text[:120])


# -- refusals


def invalid_refused(reply: Reply, what: str, *, lenient_ok: bool, strict: bool, error_shape: str) -> list[Decision]:
    """An invalid request: refused with a 4xx JSON error, 400, of the profile's error shape."""
    if reply.status == 200 and lenient_ok and not strict:
        return [info("openai.errors.rejects-invalid", actual=f"{what}: accepted (lenient, as the profile says)")]
    refused = refused_as_json(reply)
    decisions = [
        check(
            refused,
            "openai.errors.rejects-invalid",
            expected=f"{what}: a 4xx JSON error",
            actual=f"{what}: {reply.describe()}",
        )
    ]
    if refused:
        decisions.append(
            check(
                reply.status == 400,
                "openai.errors.status-400",
                expected=f"{what}: 400",
                actual=f"{what}: {reply.status}",
            )
        )
        decisions.append(error_body_shape(reply, what, error_shape))
    return decisions


def unknown_role(reply: Reply, *, strict: bool, error_shape: str) -> list[Decision]:
    """A message with role "wizard": refused with a 4xx JSON error (a SHOULD); a 5xx is still a MUST miss."""
    clause_id, what = "openai.messages.unknown-role", "role wizard"
    if reply.status == 200:
        if not strict:
            return [info(clause_id, actual=f"{what}: accepted (lenient, as the profile says)")]
        return [missed(clause_id, expected=f"{what}: a 4xx JSON error", actual=f"{what}: answered {reply.describe()}")]
    decisions = invalid_refused(reply, what, lenient_ok=False, strict=True, error_shape=error_shape)
    refused = refused_as_json(reply)
    expected = f"{what}: a 4xx JSON error"
    return [check(refused, clause_id, expected=expected, actual=f"{what}: {reply.describe()}"), *decisions]


def error_body_shape(reply: Reply, what: str, error_shape: str) -> Decision:
    problem = error_shape_problem(reply.body, error_shape)
    return check(
        not problem,
        "openai.errors.shape",
        expected=f"{what}: an error body of the {error_shape} shape",
        actual=f"{what}: {problem or 'as expected'}",
    )


def refusal(reply: Reply, clause_id: str, what: str, *, strict: bool, error_shape: str) -> list[Decision]:
    """A request the target must refuse (an unknown model): a 4xx JSON error of the profile's shape."""
    if reply.status == 200 and not strict:
        return [info(clause_id, actual=f"{what}: accepted (lenient, as the profile says)")]
    refused = refused_as_json(reply)
    decisions = [check(refused, clause_id, expected=f"{what}: a 4xx JSON error", actual=f"{what}: {reply.describe()}")]
    if refused:
        decisions.append(error_body_shape(reply, what, error_shape))
    return decisions


def refusal_shape(reply: Reply, what: str, error_shape: str) -> list[Decision]:
    """Any 4xx the run met, whatever request it answered, holds the error body shape."""
    return [error_body_shape(reply, what, error_shape)] if 400 <= reply.status < 500 else []


def auth_refused(reply: Reply, what: str, error_shape: str) -> list[Decision]:
    refused = check(
        reply.status == 401 and reply.is_json,
        "openai.auth.required",
        expected=f"{what}: 401 with a JSON error",
        actual=f"{what}: {reply.describe()}",
    )
    return [refused, *refusal_shape(reply, what, error_shape)]


# -- concurrency


def parallel_answers(codes: Sequence[str], replies: Sequence[Reply], echoing: bool) -> Decision:
    """Parallel requests, each with its nonce: every reply 200 with a unique id, none carrying another's nonce."""
    problems = []
    for code, reply in zip(codes, replies, strict=True):
        if reply.status != 200 or chat_problems(reply.body):
            problems.append(f"{code}: {reply.describe()}")
            continue
        seen = set(NONCE.findall(content_of(reply.body)))
        foreign = seen & (set(codes) - {code})
        if foreign:
            problems.append(f"the reply to {code} carries {sorted(foreign)}")
        elif echoing and code not in seen:
            problems.append(f"the reply to {code} does not repeat it: {content_of(reply.body)[:80]!r}")
    ids = [r.body.get("id") for r in replies if isinstance(r.body, dict)]
    if len(set(map(str, ids))) != len(ids):
        problems.append(f"reply ids repeat: {ids}")
    how = "each reply repeats its own nonce" if echoing else "no reply carries another's nonce (no echo to confirm)"
    return check(
        not problems,
        "openai.concurrency.parallel",
        expected=f"{len(codes)} x 200 with unique ids; {how}",
        actual="; ".join(problems[:4]) or "all answered their own request",
    )


# -- determinism


def fingerprint(body: Any) -> dict[str, Any]:
    """What repeats of one seeded temperature-0 request must share: content, tool calls, logprobs."""
    return {**comparable(body), "logprobs": token_logprobs(body)}


def divergence(replies: Sequence[Reply]) -> tuple[list[int], str]:
    """Which repeats differ from the first, and the rate said for people."""
    reference = fingerprint(replies[0].body)
    diverged = [n for n, r in enumerate(replies) if fingerprint(r.body) != reference]
    return diverged, f"{len(diverged)}/{len(replies)} repeats diverged from the first"


def repeats_identical(replies: Sequence[Reply], clause_ids: Sequence[str]) -> list[Decision]:
    diverged, rate = divergence(replies)
    reference = fingerprint(replies[0].body)
    shown = rate + (f"; repeat {diverged[0]}: {fingerprint(replies[diverged[0]].body)}" if diverged else "")
    expected = f"identical content, tool calls and logprobs: {reference}"
    return [check(not diverged, clause_id, expected=expected, actual=shown) for clause_id in clause_ids]
