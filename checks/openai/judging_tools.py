"""The openai-chat tool-calling rules (OA-05, OA-06, fact sheet 8c.14): recorded replies in, decisions out.

Like `judging`, nothing here touches the network or the report. A rule that
infers a fault from what the model wrote (the pairing of results with calls,
a call changed by a cap) first needs the assumption it rests on shown in the
same run, and is `info` "not judged" without it.
"""

from __future__ import annotations

import re
from typing import Any

from checks.decision import Decision, check, check_problems, info, missed, passed
from checks.http_client import Reply, StreamReply
from checks.openai.judging import refused_as_json, refused_note
from checks.openai.shapes import (
    arguments_of,
    call_finish_reasons,
    comparable,
    first_choice,
    message_of,
    tool_call_problems,
)
from checks.openai.sse import assembled, stream_call_id_problems

# The temperatures the suite's tool results report, one per call in call order: values a
# reply can only place beside a city by reading the result that carries them.
RESULT_TEMPERATURES = (17, 29)


CUT_NOTE = "not judged: cut at max_tokens (finish_reason length)"


def unjudged_tool_reply(reply: Reply) -> str | None:
    """Why a tool-call reply says nothing about tool-call shape: a refusal (the error-shape clause
    judges it), or a reply honestly cut at max_tokens. None when it is evidence."""
    if refused_as_json(reply):
        return refused_note(reply)
    if reply.status == 200 and first_choice(reply.body).get("finish_reason") == "length":
        return f"{CUT_NOTE}: {str(message_of(reply.body).get('tool_calls'))[:160]}"
    return None


def tool_call_shape(reply: Reply, tools: list[dict[str, Any]], *, parallel: bool = False) -> Decision:
    unjudged = unjudged_tool_reply(reply)
    if unjudged is not None:
        return info("openai.tools.call-shape", actual=unjudged)
    problems = tool_call_problems(reply.body, tools, reply.sent) if reply.status == 200 else [reply.describe()]
    if parallel:
        expected, fine = "parallel calls each well formed, with unique ids", "well formed"
    else:
        expected = "finish_reason tool_calls; unique ids, type function, an offered name, schema-valid JSON string"
        fine = str(message_of(reply.body).get("tool_calls"))
    return check_problems(problems, "openai.tools.call-shape", expected=expected, fine=fine)


def streamed_call_ids(stream: StreamReply, what: str) -> Decision:
    """The tool calls of a stream: one id per call index, none shared by two indices (not judged
    when no call was streamed, or the stream was cut at max_tokens)."""
    streamed = assembled(stream)
    if not streamed["tool_calls"]:
        return info("openai.tools.call-shape", actual=f"{what} streamed: not judged: no tool call was streamed")
    if streamed["finish_reason"] == "length":
        return info("openai.tools.call-shape", actual=f"{what} streamed: {CUT_NOTE}")
    expected = f"{what} streamed: one non-empty id per call index, unique across indices"
    return check_problems(
        stream_call_id_problems(stream), "openai.tools.call-shape", expected=expected, fine="ids unique"
    )


def parallel_calls(reply: Reply) -> Decision:
    unjudged = unjudged_tool_reply(reply)
    if unjudged is not None:
        return info("openai.tools.parallel", actual=unjudged)
    calls = message_of(reply.body).get("tool_calls") or []
    cities = [(arguments_of(c) or {}).get("city") for c in calls]
    return check(
        len(calls) == 2 and {"Paris", "Tokyo"} <= {str(c) for c in cities},
        "openai.tools.parallel",
        expected='two get_weather calls in one reply, for "Paris" and "Tokyo"',
        actual=f"{len(calls)} call(s), cities {cities}",
    )


def round_trip(reply: Reply, *, reorder: bool) -> Decision:
    order = "in reverse order" if reorder else "in call order"
    return check(
        reply.status == 200 and message_of(reply.body).get("role") == "assistant",
        "openai.tools.round-trip",
        expected=f"200 with an assistant message after the echoed tool calls, answered {order}",
        actual=reply.describe(),
    )


def reported_pairs(text: str, cities: list[str]) -> dict[str, int | None]:
    """Each city with the first result temperature written after it and before the next city."""
    places = sorted((text.find(city), city) for city in cities if city in text)
    pairs: dict[str, int | None] = dict.fromkeys(cities)
    for n, (start, city) in enumerate(places):
        stop = places[n + 1][0] if n + 1 < len(places) else len(text)
        found = re.search(r"\b(" + "|".join(map(str, RESULT_TEMPERATURES)) + r")\b", text[start:stop])
        pairs[city] = int(found.group(1)) if found else None
    return pairs


def result_pairing(in_order: Reply, reordered: Reply, cities: list[str]) -> Decision:
    """Results sent in call order, then reversed: the same city-result pairs both times.

    Judged only when the in-order reply reports each city beside its own result, which
    shows the target writes the pairs it read; a free-writing model is not judged."""
    clause_id = "openai.tools.result-by-id"
    truth = dict(zip(cities, RESULT_TEMPERATURES, strict=True))
    first = reported_pairs(str(message_of(in_order.body).get("content") or ""), cities)
    if in_order.status != 200 or first != truth:
        return info(clause_id, actual=f"not judged: with results in call order the reply does not pair them: {first}")
    second = reported_pairs(str(message_of(reordered.body).get("content") or ""), cities)
    return check(
        second == truth,
        clause_id,
        expected=f"results sent in reverse order still paired by tool_call_id: {truth}",
        actual=f"pairs reported {second}" if reordered.status == 200 else reordered.describe(),
    )


def unknown_call_id(reply: Reply, *, strict: bool, echoed: Reply | None = None) -> Decision:
    """A conversation whose tool message answers no call, refused with a 4xx.

    `echoed`: the reply to the same conversation with the right tool_call_id. When that was not
    answered 200, the target refuses or fails the conversation itself (its own assistant message
    echoed, say), and a refusal or failure of the stray id's twin says nothing about the id."""
    clause_id = "openai.tools.unknown-call-id"
    if echoed is not None and echoed.status != 200:
        why = f"the same conversation with the right id was answered {echoed.status} too"
        return info(clause_id, actual=f"not judged: {why} ({reply.describe()})")
    if 400 <= reply.status < 500:
        return passed("openai.tools.unknown-call-id", actual=reply.describe())
    if reply.status == 200 and not strict:
        return info("openai.tools.unknown-call-id", actual=f"lenient, as the profile says: {reply.describe()}")
    return missed(
        "openai.tools.unknown-call-id",
        expected="a 4xx for a tool_call_id that matches no call",
        actual=reply.describe(),
    )


def truncated_call(reply: Reply, uncapped: Any = None, *, called: bool = False) -> Decision:
    """A tool call with max_tokens 3: either finish_reason length, or complete valid arguments.

    `uncapped`: the call the same request gets without the cap, when the target was shown to
    give it twice; a tool_calls reply whose calls differ from it was cut and dressed up.
    `called`: the uncapped request was answered with a usable call. Where no call was made
    (a refusal, a stop without calls, a length cut of a target never shown to call) nothing
    says how the target reports a cut call."""
    clause_id = "openai.tools.truncated-call"
    if refused_as_json(reply):
        return info(clause_id, actual=refused_note(reply))
    if reply.status != 200:
        return missed(clause_id, expected="200, or a 4xx JSON error", actual=reply.describe())
    reason = first_choice(reply.body).get("finish_reason")
    calls = message_of(reply.body).get("tool_calls") or []
    shown = f"finish_reason {reason!r}, calls {calls}"
    if not calls and (reason == "stop" or (reason == "length" and not called)):
        return info(clause_id, actual=f"not judged: no tool call was made ({shown})")
    complete = bool(calls) and all(isinstance(arguments_of(c), dict) for c in calls)
    made = reason in call_finish_reasons(reply.sent)  # reported as a call made, not cut
    altered = made and uncapped is not None and comparable(reply.body) != uncapped
    return check(
        (reason == "length" or (made and complete)) and not altered,
        clause_id,
        expected="finish_reason length when max_tokens 3 cut the call; tool_calls only with complete JSON arguments"
        + (f", the uncapped call {uncapped['tool_calls']}" if uncapped is not None else ""),
        actual=shown + ("; not the call made without the cap" if altered else ""),
    )
