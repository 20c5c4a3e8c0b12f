"""Server-Sent Events > Request, Response Stream, Event Types, Reconnection: tool calls over SSE.

With defaults every listed tool is called once (`survey.survey`): those calls are
held to the stream rules and show how a failing tool ends its stream; the
first tool that answered ok:true is then replayed by task_id, refused, and
called with its strings and integers as large as its schema allows, so a
chunked result is seen. Options only name the tools and inputs to use instead.
"""

from __future__ import annotations

import uuid

from checks.decision import info, record
from checks.errors import PhaseStopped
from checks.ors.judging_calls import (
    judge_call,
    judge_content_type,
    judge_failing_tools,
    judge_first_event,
    judge_missing_input,
    judge_raising_tool,
    judge_refusal,
    judge_resume,
    judge_stream,
    judge_task_ids,
    note_unknown_task_id,
)
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn, tool_call
from checks.ors.stream import OrsStream, ToolCall, reassembled
from checks.ors.survey import breaking_call, call_once, sized_calls, survey

CALLS_CLAUSES = (
    "ors.call.sse-content-type",
    "ors.call.first-event-task-id",
    "ors.call.terminal-event",
    "ors.call.chunk-reassembly",
    "ors.call.result-envelope",
    "ors.call.tooloutput-shape",
    "ors.call.reward-number",
    "ors.call.unknown-tool",
    "ors.call.bad-input",
    "ors.call.missing-input",
    "ors.call.resume",
    "ors.call.unknown-task-id",
    "ors.call.error-event",
)
SIZED_TRIES = 4  # tools called with sized inputs at most, until one answers chunked


def first_event_read(data: bytes) -> bool:
    """Whether the body read so far holds one whole SSE event (the task_id a resume needs)."""
    return b"\n\n" in data.replace(b"\r\n", b"\n").lstrip(b"\n")


async def calls_phase(ctx: Ctx) -> None:
    async with client(ctx, "tool calls") as http:
        await learn(ctx, http)
        surveyed = await survey(ctx, http)
        for call in surveyed:
            record(ctx.report, judge_call(call), http.transcript)
        body = tool_call(ctx, None, ctx.options.tool_input)
        if body is None:
            raise PhaseStopped("the env lists no tool to call", http.transcript)
        sid = await http.episode(ctx)
        reply, stream = await http.call(sid, body)
        record(ctx.report, [judge_content_type(reply), *judge_stream(stream)], http.transcript)
        cut = await _resume(ctx, http, ToolCall(body, reply, stream))
        ids = judge_task_ids([*surveyed, ToolCall(body, reply, stream), cut])
        record(ctx.report, [ids] if ids else [], http.transcript)
        await _big_output(ctx, http, surveyed)
        await _refusals(ctx, http, surveyed)
        await _raising(ctx, http, surveyed)
        await http.delete(sid)


async def _resume(ctx: Ctx, http: OrsClient, whole: ToolCall) -> ToolCall:
    """Replay `whole` by its task_id, then cut a call after its task_id and resume it twice; the cut call."""
    body = whole.body
    task_id = whole.stream.task_id()
    if not task_id or reassembled(whole.stream) is None:
        why = f"not judged: the call of {whole.name} gave no task_id and end to replay"
        record(ctx.report, info("ors.call.resume", actual=why), http.transcript)
        return ToolCall(body, None)
    sid = await http.episode(ctx)
    _, replay = await http.call(sid, {**body, "task_id": task_id})
    partial, cut = await http.call(sid, body, until=first_event_read)
    cut_id = cut.task_id()
    resumed = (await http.call(sid, {**body, "task_id": cut_id}))[1] if cut_id else OrsStream()
    again = (await http.call(sid, {**body, "task_id": cut_id}))[1] if cut_id else OrsStream()
    await http.delete(sid)
    decisions = [*judge_stream(replay), *judge_stream(resumed), judge_resume(whole.stream, replay, cut, resumed, again)]
    record(ctx.report, decisions, http.transcript)
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, {**body, "task_id": f"zz{uuid.uuid4().hex}"})
    await http.delete(sid)
    record(ctx.report, note_unknown_task_id(reply, stream), http.transcript)
    return ToolCall(body, partial, cut)


async def _big_output(ctx: Ctx, http: OrsClient, surveyed: list[ToolCall]) -> None:
    """Sized calls until one answers chunked, unless a chunked stream was judged already."""
    clause = "ors.call.chunk-reassembly"
    if ctx.report.decided(clause) and not ctx.options.big_output_tool:
        return
    tried = []
    for body in sized_calls(ctx, surveyed)[:SIZED_TRIES]:
        call = await call_once(ctx, http, body)
        tried.append(call.describe())
        record(ctx.report, judge_call(call), http.transcript)
        if "chunk" in call.stream.names():
            return
    why = f"not judged: no call answered over 4 KB, chunked (tried {'; '.join(tried) or 'none'})"
    record(ctx.report, info(clause, actual=why), http.transcript)


async def _refusals(ctx: Ctx, http: OrsClient, surveyed: list[ToolCall]) -> None:
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, {"name": f"zz_no_such_tool_{uuid.uuid4().hex[:6]}", "input": {}})
    decisions = [judge_refusal("ors.call.unknown-tool", reply, stream)]
    decisions += judge_stream(stream) if stream.events else []
    breaking = breaking_call(ctx, surveyed)
    if breaking is None:
        tools = ", ".join(call.name for call in surveyed)
        why = f"not judged: no listed tool has a required property a wrong type breaks ({tools})"
        decisions.append(info("ors.call.bad-input", actual=why))
    else:
        reply, stream = await http.call(sid, breaking)
        decisions.append(judge_refusal("ors.call.bad-input", reply, stream))
    missing, _ = await http.call(sid, {"name": ctx.state.tool or surveyed[0].name})
    decisions.append(judge_missing_input(missing))
    await http.delete(sid)
    record(ctx.report, decisions, http.transcript)


async def _raising(ctx: Ctx, http: OrsClient, surveyed: list[ToolCall]) -> None:
    """The named raising tool's stream, else how the surveyed tools that failed ended theirs."""
    if not ctx.options.raising_tool:
        record(ctx.report, judge_failing_tools(surveyed), http.transcript)
        return
    named = ctx.options.raising_tool
    body = tool_call(ctx, named, ctx.options.raising_input) or {"name": named, "input": {}}
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, body)
    await http.delete(sid)
    record(ctx.report, [judge_raising_tool(reply, stream), judge_first_event(stream)], http.transcript)
