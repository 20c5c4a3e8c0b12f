"""Server-Sent Events > Request, Response Stream, Event Types, Reconnection: tool calls over SSE."""

from __future__ import annotations

import uuid
from typing import Any

from checks.decision import Decision, info, missed, passed, record
from checks.errors import PhaseStopped
from checks.ors.judging import (
    OrsStream,
    breaking_input,
    judge_chunks,
    judge_content_type,
    judge_first_event,
    judge_result,
    judge_terminal,
    reassembled,
    refused,
    result_of,
    server_error,
    terminal_problem,
)
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn, tool_call

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


def judge_stream(stream: OrsStream) -> list[Decision]:
    """Every rule one finished call stream is held to (chunking only when it was chunked)."""
    decisions = [judge_first_event(stream), judge_terminal(stream)]
    if "chunk" in stream.names():
        decisions.append(judge_chunks(stream))
    result, problem = result_of(stream)
    if not problem:
        decisions += judge_result(result)
    return decisions


def first_event_read(data: bytes) -> bool:
    """Whether the body read so far holds one whole SSE event (the task_id a resume needs)."""
    return b"\n\n" in data.replace(b"\r\n", b"\n").lstrip(b"\n")


async def calls_phase(ctx: Ctx) -> None:
    async with client(ctx, "tool calls") as http:
        await learn(ctx, http)
        body = tool_call(ctx, None, ctx.options.tool_input)
        if body is None:
            raise PhaseStopped("the env lists no tool to call", http.transcript)
        sid = await http.episode(ctx)
        reply, stream = await http.call(sid, body)
        record(ctx.report, judge_content_type(reply), http.transcript)
        record(ctx.report, judge_stream(stream), http.transcript)
        await _resume(ctx, http, body, stream)
        await _big_output(ctx, http)
        await _refusals(ctx, http, body)
        await _raising(ctx, http)
        await http.delete(sid)


async def _resume(ctx: Ctx, http: OrsClient, body: dict[str, Any], whole: OrsStream) -> None:
    clause = "ors.call.resume"
    task_id = (whole.first("task_id") or "").strip()
    original = reassembled(whole)
    if not task_id or original is None:
        record(
            ctx.report,
            info(clause, actual="not judged: the first call gave no task_id and end to replay"),
            http.transcript,
        )
        return
    sid = await http.episode(ctx)
    _, replay = await http.call(sid, {**body, "task_id": task_id})
    _, partial = await http.call(sid, body, until=first_event_read)
    cut_id = (partial.first("task_id") or "").strip()
    resumed = (await http.call(sid, {**body, "task_id": cut_id}))[1] if cut_id else OrsStream()
    again = (await http.call(sid, {**body, "task_id": cut_id}))[1] if cut_id else OrsStream()
    await http.delete(sid)
    record(ctx.report, judge_stream(replay) + judge_stream(resumed), http.transcript)
    expected = "the replay of a finished call answers its result again, byte for byte; a cut call resumes once"
    wrong = []
    if reassembled(replay) != original:
        wrong.append(
            f"replay after end: {replay.describe()} ({(reassembled(replay) or '')[:80]!r} vs {original[:80]!r})"
        )
    if not cut_id:
        wrong.append(f"the cut stream gave no task_id: {partial.describe()}")
    elif reassembled(resumed) is None:
        wrong.append(f"resume after the cut gave no result: {resumed.describe()}")
    elif reassembled(again) != reassembled(resumed):
        wrong.append(f"two replays of one call differ: the tool ran again ({(reassembled(again) or '')[:80]!r})")
    decision = (
        missed(clause, expected=expected, actual="; ".join(wrong))
        if wrong
        else passed(clause, actual="replayed", expected=expected)
    )
    record(ctx.report, decision, http.transcript)
    record(
        ctx.report, info("ors.call.unknown-task-id", actual=await _unknown_task_id(ctx, http, body)), http.transcript
    )


async def _unknown_task_id(ctx: Ctx, http: OrsClient, body: dict[str, Any]) -> str:
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, {**body, "task_id": f"zz{uuid.uuid4().hex}"})
    await http.delete(sid)
    return f"{reply.status}: events {stream.describe()}" if stream.events else reply.describe(100)


async def _big_output(ctx: Ctx, http: OrsClient) -> None:
    clause = "ors.call.chunk-reassembly"
    body = (
        tool_call(ctx, ctx.options.big_output_tool, ctx.options.big_output_input)
        if ctx.options.big_output_tool
        else None
    )
    if body is None:
        if not ctx.report.decided(clause):
            record(
                ctx.report,
                info(clause, actual="not judged: no big_output_tool named and no chunked stream seen"),
                http.transcript,
            )
        return
    sid = await http.episode(ctx)
    _, stream = await http.call(sid, body)
    await http.delete(sid)
    if "chunk" not in stream.names():
        record(
            ctx.report,
            info(clause, actual=f"not judged: {body['name']} answered unchunked: {stream.describe()}"),
            http.transcript,
        )
    record(ctx.report, judge_stream(stream), http.transcript)


def refusal(clause: str, reply_status: int, stream: OrsStream, described: str) -> Decision:
    """A call that must not run: refused with a 4xx, or an end with ok:false; a 5xx, ok:true or no answer miss."""
    expected = 'a 4xx, or an end event with {"ok": false}'
    if 400 <= reply_status < 500:
        return passed(clause, actual=f"{reply_status}", expected=expected)
    result, problem = result_of(stream)
    if not problem and isinstance(result, dict) and result.get("ok") is False:
        return passed(clause, actual="end with ok:false", expected=expected)
    return missed(
        clause, expected=expected, actual=described if problem or reply_status != 200 else f"ran: {stream.describe()}"
    )


async def _refusals(ctx: Ctx, http: OrsClient, body: dict[str, Any]) -> None:
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, {"name": f"zz_no_such_tool_{uuid.uuid4().hex[:6]}", "input": {}})
    decisions = [refusal("ors.call.unknown-tool", reply.status, stream, reply.describe(100))]
    decisions += judge_stream(stream) if stream.events else []
    breaking = breaking_input(ctx.state.tools.get(body["name"], {}).get("input_schema"))
    if breaking is None:
        decisions.append(
            info("ors.call.bad-input", actual=f"not judged: no input known to break {body['name']}'s schema")
        )
    else:
        reply, stream = await http.call(sid, {"name": body["name"], "input": breaking})
        decisions.append(refusal("ors.call.bad-input", reply.status, stream, reply.describe(100)))
    missing, _ = await http.call(sid, {"name": body["name"]})
    decisions.append(
        passed("ors.call.missing-input", actual=missing.describe(80))
        if refused(missing)
        else missed("ors.call.missing-input", expected="a 4xx", actual=missing.describe(100))
    )
    await http.delete(sid)
    record(ctx.report, decisions, http.transcript)


async def _raising(ctx: Ctx, http: OrsClient) -> None:
    clause = "ors.call.error-event"
    if not ctx.options.raising_tool:
        record(ctx.report, info(clause, actual="not judged: no raising_tool named"), http.transcript)
        return
    body = tool_call(ctx, ctx.options.raising_tool, ctx.options.raising_input)
    sid = await http.episode(ctx)
    reply, stream = await http.call(sid, body)
    await http.delete(sid)
    expected = "the stream ends with an error event, or an end with ok:false"
    result, problem = result_of(stream)
    if server_error(reply) or terminal_problem(stream):
        decision = missed(
            clause, expected=expected, actual=f"{reply.status}: {terminal_problem(stream) or reply.describe(100)}"
        )
    elif stream.events[-1][0] == "error" or (not problem and isinstance(result, dict) and result.get("ok") is False):
        decision = passed(clause, actual=f"ends with {stream.events[-1][0]}", expected=expected)
    else:
        decision = missed(clause, expected=expected, actual=f"the raising tool answered {stream.describe()}")
    record(ctx.report, [decision, judge_first_event(stream)], http.transcript)
