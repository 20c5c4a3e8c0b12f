"""OA-05, OA-06 and fact sheet 8c.14: one call, parallel calls, a call cut by max_tokens, the round trip."""

from __future__ import annotations

import json
from typing import Any

from checks.http_client import Reply
from checks.openai import judging_tools as judging
from checks.openai.facts import ChatClient, client, model_of
from checks.openai.judging import refusal_shape
from checks.openai.options import Ctx
from checks.openai.phase_chat import REPLY_CLAUSES, check_reply
from checks.openai.recording import PhaseRecord, offered
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
PARALLEL_CLAUSES = ("openai.tools.parallel", "openai.tools.result-by-id")
# The tools phase also decides what every chat reply must hold, on its tool-call replies, and the
# error body shape of any refusal it meets.
TOOLS_PHASE_CLAUSES = (*TOOL_CLAUSES, *REPLY_CLAUSES, "openai.errors.shape")


async def tools_phase(ctx: Ctx) -> None:
    profile = ctx.options.profile()
    if not offered(ctx.report, profile.tools, TOOL_CLAUSES, "the profile says the target does not call tools"):
        return
    model, cap = await model_of(ctx), ctx.options.max_tokens_cap
    phase = PhaseRecord(ctx.report)
    async with client(ctx, "tool calls") as http:
        body = single_tool_body(model, cap)
        reply = await http.chat(body)
        shape = judging.tool_call_shape(reply, TOOLS)
        phase.record([shape, *refusal_shape(reply, "a tool request", profile.error_shape)], http.transcript)
        if reply.status == 200:
            check_reply(ctx, http, reply, max_tokens=cap)
        usable = shape.outcome == "pass"
        if usable:
            echoed = await round_trip(phase, http, body, reply.body, reorder=False)
            await _unknown_call_id(ctx, phase, http, body, reply.body, echoed)
        else:
            why = f"not judged: no usable call to go on from ({shape.actual[:200]})"
            for clause_id in ("openai.tools.round-trip", "openai.tools.unknown-call-id"):
                phase.note(clause_id, why)
        await _parallel(ctx, phase, http, model)
        await _truncated(ctx, phase, http, model, reply if usable else None)
    phase.close()


async def _parallel(ctx: Ctx, phase: PhaseRecord, http: ChatClient, model: str) -> None:
    why = "the profile says the target makes one tool call at a time"
    if not offered(ctx.report, ctx.options.profile().parallel_tool_calls, PARALLEL_CLAUSES, why):
        return
    body = parallel_tool_body(model, ctx.options.max_tokens_cap)
    reply = await http.chat(body)
    shape = judging.tool_call_shape(reply, [WEATHER_TOOL], parallel=True)
    pair = judging.parallel_calls(reply)
    refused = refusal_shape(reply, "a parallel tool request", ctx.options.profile().error_shape)
    phase.record([shape, pair, *refused], http.transcript)
    calls = message_of(reply.body).get("tool_calls") or []
    if not (shape.outcome == "pass" and len(calls) == 2):
        phase.note("openai.tools.result-by-id", f"not judged: no two usable calls ({pair.actual[:200]})")
        return
    in_order = await round_trip(phase, http, body, reply.body, reorder=False)
    reordered = await round_trip(phase, http, body, reply.body, reorder=True)
    cities = [str((arguments_of(call) or {}).get("city")) for call in calls]
    phase.record(judging.result_pairing(in_order, reordered, cities), http.transcript)


async def round_trip(
    phase: PhaseRecord, http: ChatClient, body: dict[str, Any], answer: Any, *, reorder: bool
) -> Reply:
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
    phase.record(judging.round_trip(reply, reorder=reorder), http.transcript)
    return reply


async def _unknown_call_id(
    ctx: Ctx, phase: PhaseRecord, http: ChatClient, body: dict[str, Any], answer: Any, echoed: Reply
) -> None:
    assistant = message_of(answer)
    stray = {"role": "tool", "tool_call_id": "call_matches_nothing_0000", "content": "{}"}
    follow = {**body, "messages": [*body["messages"], assistant, stray]}
    follow.pop("tool_choice", None)
    reply = await http.chat(follow)
    profile = ctx.options.profile()
    decisions = [judging.unknown_call_id(reply, strict=profile.strict_validation, echoed=echoed)]
    decisions += refusal_shape(reply, "a stray tool_call_id", profile.error_shape)
    phase.record(decisions, http.transcript)


async def _truncated(ctx: Ctx, phase: PhaseRecord, http: ChatClient, model: str, uncapped: Reply | None) -> None:
    """A tool call with a tiny max_tokens: either finish_reason length, or the complete call made without it.

    The uncapped call is held against the capped one only if a second uncapped request
    repeats it: a target that varies its calls is judged on the arguments alone."""
    why = "the profile says max_tokens is not honoured"
    if not offered(ctx.report, ctx.options.profile().max_tokens, ["openai.tools.truncated-call"], why):
        return
    known = None
    if uncapped is not None:
        again = await http.chat(single_tool_body(model, ctx.options.max_tokens_cap))
        if again.status == 200 and comparable(again.body) == comparable(uncapped.body):
            known = comparable(uncapped.body)
    reply = await http.chat(single_tool_body(model, 3))
    decisions = [judging.truncated_call(reply, known, called=uncapped is not None)]
    decisions += refusal_shape(reply, "a tool request with max_tokens 3", ctx.options.profile().error_shape)
    phase.record(decisions, http.transcript)
