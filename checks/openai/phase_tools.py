"""OA-05, OA-06 and fact sheet 8c.14: one call, parallel calls, a call cut by max_tokens, the round trip."""

from __future__ import annotations

import json
from typing import Any

from checks.decision import record
from checks.http_client import Reply
from checks.openai import judging_tools as judging
from checks.openai.facts import ChatClient, client, model_of
from checks.openai.options import Ctx
from checks.openai.phase_chat import REPLY_CLAUSES, check_reply
from checks.openai.requests import TOOLS, WEATHER_TOOL, parallel_tool_body, single_tool_body
from checks.openai.shapes import arguments_of, comparable, message_of

TOOL_CLAUSES = (
    "openai.tools.call-shape",
    "openai.tools.parallel",
    "openai.tools.truncated-call",
    "openai.tools.round-trip",
    "openai.tools.result-by-id",
    "openai.tools.unknown-call-id",
)
# The tools phase also decides what every chat reply must hold, on its tool-call replies.
TOOLS_PHASE_CLAUSES = (*TOOL_CLAUSES, *REPLY_CLAUSES)


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
        usable = record(report, judging.tool_call_shape(reply, TOOLS), http.transcript)
        if reply.status == 200:
            check_reply(ctx, http, reply, max_tokens=cap)
        if usable:
            await round_trip(ctx, http, body, reply.body, reorder=False)
            await _unknown_call_id(ctx, http, body, reply.body)
        else:
            report.error_undecided(
                ("openai.tools.round-trip", "openai.tools.unknown-call-id", "openai.tools.result-by-id"),
                "not exercised: the single tool call was not usable",
                http.transcript,
            )
        await _parallel(ctx, http, model)
        await _truncated(ctx, http, model, reply if usable else None)


async def _parallel(ctx: Ctx, http: ChatClient, model: str) -> None:
    report = ctx.report
    if not ctx.options.profile().parallel_tool_calls:
        for clause_id in ("openai.tools.parallel", "openai.tools.result-by-id"):
            report.unsupported(clause_id, "the profile says the target makes one tool call at a time")
        return
    body = parallel_tool_body(model, ctx.options.max_tokens_cap)
    reply = await http.chat(body)
    well_formed = record(report, judging.tool_call_shape(reply, [WEATHER_TOOL], parallel=True), http.transcript)
    record(report, judging.parallel_calls(reply), http.transcript)
    calls = message_of(reply.body).get("tool_calls") or []
    if not (well_formed and len(calls) == 2):
        report.error_undecided(("openai.tools.result-by-id",), "not exercised: no two usable calls", http.transcript)
        return
    in_order = await round_trip(ctx, http, body, reply.body, reorder=False)
    reordered = await round_trip(ctx, http, body, reply.body, reorder=True)
    cities = [str((arguments_of(call) or {}).get("city")) for call in calls]
    record(report, judging.result_pairing(in_order, reordered, cities), http.transcript)


async def round_trip(ctx: Ctx, http: ChatClient, body: dict[str, Any], answer: Any, *, reorder: bool) -> Reply:
    """Echo the assistant message as received, answer each call by tool_call_id, expect an assistant reply."""
    assistant = message_of(answer)
    calls = list(assistant.get("tool_calls") or [])
    temperatures = judging.RESULT_TEMPERATURES
    results = [
        {
            "role": "tool",
            "tool_call_id": call["id"],
            "content": json.dumps({"temperature_c": temperatures[n % len(temperatures)], "sky": "clear"}),
        }
        for n, call in enumerate(calls)
    ]
    if reorder:
        results.reverse()
    follow = {**body, "messages": [*body["messages"], assistant, *results]}
    follow.pop("tool_choice", None)
    reply = await http.chat(follow)
    record(ctx.report, judging.round_trip(reply, reorder=reorder), http.transcript)
    return reply


async def _unknown_call_id(ctx: Ctx, http: ChatClient, body: dict[str, Any], answer: Any) -> None:
    assistant = message_of(answer)
    stray = {"role": "tool", "tool_call_id": "call_matches_nothing_0000", "content": "{}"}
    follow = {**body, "messages": [*body["messages"], assistant, stray]}
    follow.pop("tool_choice", None)
    reply = await http.chat(follow)
    strict = ctx.options.profile().strict_validation
    record(ctx.report, judging.unknown_call_id(reply, strict=strict), http.transcript)


async def _truncated(ctx: Ctx, http: ChatClient, model: str, uncapped: Reply | None) -> None:
    """A tool call with a tiny max_tokens: either finish_reason length, or the complete call made without it.

    The uncapped call is held against the capped one only if a second uncapped request
    repeats it: a target that varies its calls is judged on the arguments alone."""
    report = ctx.report
    if not ctx.options.profile().max_tokens:
        report.unsupported("openai.tools.truncated-call", "the profile says max_tokens is not honoured")
        return
    known = None
    if uncapped is not None:
        again = await http.chat(single_tool_body(model, ctx.options.max_tokens_cap))
        if again.status == 200 and comparable(again.body) == comparable(uncapped.body):
            known = comparable(uncapped.body)
    reply = await http.chat(single_tool_body(model, 3))
    record(report, judging.truncated_call(reply, known), http.transcript)
