"""OA-05, OA-06 and fact sheet 8c.14: one call, parallel calls, a call cut by max_tokens, the round trip."""

from __future__ import annotations

import json
from typing import Any

from checks.openai.client import ChatClient
from checks.openai.facts import client, model_of
from checks.openai.options import Ctx
from checks.openai.phase_chat import check_reply
from checks.openai.requests import TOOLS, WEATHER_TOOL, parallel_tool_body, single_tool_body
from checks.openai.shapes import arguments_of, first_choice, message_of, tool_call_problems

TOOL_CLAUSES = (
    "openai.tools.call-shape",
    "openai.tools.parallel",
    "openai.tools.truncated-call",
    "openai.tools.round-trip",
    "openai.tools.unknown-call-id",
)


async def tools_phase(ctx: Ctx) -> None:
    report = ctx.report
    profile = ctx.options.profile()
    if not profile.tools:
        for clause_id in TOOL_CLAUSES:
            report.unsupported(clause_id, "the profile says the target does not call tools")
        return
    model = await model_of(ctx)
    cap = ctx.options.max_tokens_cap
    async with client(ctx, "tool calls") as http:
        body = single_tool_body(model, cap)
        reply = await http.chat(body)
        problems = tool_call_problems(reply.body, TOOLS) if reply.status == 200 else [reply.describe()]
        report.check(
            not problems,
            "openai.tools.call-shape",
            expected="finish_reason tool_calls; unique ids, type function, an offered name, schema-valid JSON string",
            actual="; ".join(problems) or str(message_of(reply.body).get("tool_calls")),
            evidence=http.transcript,
        )
        if reply.status == 200:
            check_reply(ctx, http, reply, max_tokens=cap)
        if not problems:
            await round_trip(ctx, http, body, reply.body, reorder=False)
            await _unknown_call_id(ctx, http, body, reply.body)
        else:
            report.error_undecided(
                ("openai.tools.round-trip", "openai.tools.unknown-call-id"),
                "not exercised: the single tool call was not usable",
                http.transcript,
            )
        await _parallel(ctx, http, model)
        await _truncated(ctx, http, model)


async def _parallel(ctx: Ctx, http: ChatClient, model: str) -> None:
    report = ctx.report
    if not ctx.options.profile().parallel_tool_calls:
        report.unsupported("openai.tools.parallel", "the profile says the target makes one tool call at a time")
        return
    body = parallel_tool_body(model, ctx.options.max_tokens_cap)
    reply = await http.chat(body)
    problems = tool_call_problems(reply.body, [WEATHER_TOOL]) if reply.status == 200 else [reply.describe()]
    report.check(
        not problems,
        "openai.tools.call-shape",
        expected="parallel calls each well formed, with unique ids",
        actual="; ".join(problems) or "well formed",
        evidence=http.transcript,
    )
    calls = message_of(reply.body).get("tool_calls") or []
    cities = [(arguments_of(c) or {}).get("city") for c in calls]
    report.check(
        len(calls) == 2 and {"Paris", "Tokyo"} <= {str(c) for c in cities},
        "openai.tools.parallel",
        expected='two get_weather calls in one reply, for "Paris" and "Tokyo"',
        actual=f"{len(calls)} call(s), cities {cities}",
        evidence=http.transcript,
    )
    if not problems and len(calls) == 2:
        await round_trip(ctx, http, body, reply.body, reorder=False)
        await round_trip(ctx, http, body, reply.body, reorder=True)


async def round_trip(ctx: Ctx, http: ChatClient, body: dict[str, Any], answer: Any, *, reorder: bool) -> None:
    """Echo the assistant message as received, answer each call by tool_call_id, expect an assistant reply."""
    assistant = message_of(answer)
    calls = list(assistant.get("tool_calls") or [])
    results = [
        {"role": "tool", "tool_call_id": call["id"], "content": json.dumps({"temperature_c": 20 + n, "sky": "clear"})}
        for n, call in enumerate(calls)
    ]
    if reorder:
        results.reverse()
    follow = {**body, "messages": [*body["messages"], assistant, *results]}
    follow.pop("tool_choice", None)
    reply = await http.chat(follow)
    order = "in reverse order" if reorder else "in call order"
    ctx.report.check(
        reply.status == 200 and message_of(reply.body).get("role") == "assistant",
        "openai.tools.round-trip",
        expected=f"200 with an assistant message after the echoed tool calls, answered {order}",
        actual=reply.describe(),
        evidence=http.transcript,
    )


async def _unknown_call_id(ctx: Ctx, http: ChatClient, body: dict[str, Any], answer: Any) -> None:
    assistant = message_of(answer)
    stray = {"role": "tool", "tool_call_id": "call_matches_nothing_0000", "content": "{}"}
    follow = {**body, "messages": [*body["messages"], assistant, stray]}
    follow.pop("tool_choice", None)
    reply = await http.chat(follow)
    if 400 <= reply.status < 500:
        ctx.report.passed("openai.tools.unknown-call-id", actual=reply.describe(), evidence=http.transcript)
    elif reply.status == 200 and not ctx.options.profile().strict_validation:
        ctx.report.info(
            "openai.tools.unknown-call-id",
            actual=f"lenient, as the profile says: {reply.describe()}",
            evidence=http.transcript,
        )
    else:
        ctx.report.failed(
            "openai.tools.unknown-call-id",
            expected="a 4xx for a tool_call_id that matches no call",
            actual=reply.describe(),
            evidence=http.transcript,
        )


async def _truncated(ctx: Ctx, http: ChatClient, model: str) -> None:
    """A tool call with a tiny max_tokens: either finish_reason length, or complete valid arguments."""
    report = ctx.report
    if not ctx.options.profile().max_tokens:
        report.unsupported("openai.tools.truncated-call", "the profile says max_tokens is not honoured")
        return
    body = single_tool_body(model, 3)
    reply = await http.chat(body)
    if reply.status != 200:
        report.check(
            400 <= reply.status < 500 and reply.is_json,
            "openai.tools.truncated-call",
            expected="200, or a 4xx JSON error",
            actual=reply.describe(),
            evidence=http.transcript,
        )
        return
    reason = first_choice(reply.body).get("finish_reason")
    calls = message_of(reply.body).get("tool_calls") or []
    complete = bool(calls) and all(isinstance(arguments_of(c), dict) for c in calls)
    report.check(
        reason == "length" or (reason == "tool_calls" and complete) or (reason == "stop" and not calls),
        "openai.tools.truncated-call",
        expected="finish_reason length when max_tokens 3 cut the call; tool_calls only with complete JSON arguments",
        actual=f"finish_reason {reason!r}, calls {calls}",
        evidence=http.transcript,
    )
