"""The ORS call rules as pure judges (Server-Sent Events; Data Types > ToolOutput; Sessions > 5).

A call is judged from what was observed (`stream.ToolCall`: the body sent, the
reply, its events): one stream's events and result, a refusal, a replay by
task_id, how failing tools end their streams, and a call after finished. The
rest of the ORS judges are in `checks.ors.judging`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from checks.decision import Decision, check, info, missed, passed
from checks.evidence import summarize, truncate
from checks.http_client import Reply
from checks.ors.judging import blocks_problem
from checks.ors.stream import (
    NonFinite,
    OrsStream,
    ToolCall,
    is_sse,
    output_of,
    reassembled,
    refused,
    result_of,
    server_error,
    strict_json,
    terminal_problem,
)

REFUSED = 'a 4xx, or an end event with {"ok": false}'


def judge_content_type(reply: Reply) -> Decision:
    clause = "ors.call.sse-content-type"
    expected = "200 text/event-stream (the request said Accept: application/json)"
    held = reply.status == 200 and is_sse(reply.content_type)
    return check(held, clause, expected=expected, actual=reply.content_type if held else reply.describe())


def judge_first_event(stream: OrsStream) -> Decision:
    held = bool(stream.task_id())
    shown = f"task_id {truncate(stream.task_id(), 40)}" if held else f"events {stream.describe()}"
    return check(
        held, "ors.call.first-event-task-id", expected="the first event is task_id with a non-empty id", actual=shown
    )


def judge_terminal(stream: OrsStream) -> Decision:
    problem = terminal_problem(stream)
    shown = problem or f"ends with {stream.events[-1][0]}"
    return check(
        not problem, "ors.call.terminal-event", expected="exactly one end or error event, the last one", actual=shown
    )


def judge_chunks(stream: OrsStream) -> Decision:
    clause = "ors.call.chunk-reassembly"
    expected = "chunk data + end data join into one JSON object"
    text = reassembled(stream)
    count = stream.names().count("chunk")
    if text is None:
        return missed(clause, expected=expected, actual=f"no end event after {count} chunks: {stream.describe()}")
    value, problem = strict_json(text)
    if problem or not isinstance(value, dict):
        return missed(clause, expected=expected, actual=f"{count} chunks + end: {problem or summarize(value, 120)}")
    return passed(clause, actual=f"{count} chunks + end: {len(text)} characters of JSON", expected=expected)


def judge_result(result: Any) -> list[Decision]:
    """result-envelope, tooloutput-shape and reward-number for one parsed RunToolOutput."""
    envelope = "ors.call.result-envelope"
    expected = '{"ok": true, "output": ToolOutput} or {"ok": false, "error": str}'
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    if result["ok"] is False:
        if isinstance(result.get("error"), str):
            return [passed(envelope, actual=f"ok:false {truncate(result['error'], 80)!r}", expected=expected)]
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    output = result.get("output")
    if not isinstance(output, dict):
        return [missed(envelope, expected=expected, actual=summarize(result, 160))]
    return [passed(envelope, actual="ok:true with an output object", expected=expected), *judge_output(output)]


def judge_output(output: dict[str, Any]) -> list[Decision]:
    problem = blocks_problem(output.get("blocks"))
    if not problem and not isinstance(output.get("finished"), bool):
        problem = f"finished is {summarize(output.get('finished'), 40)}"
    if not problem and output.get("metadata") is not None and not isinstance(output.get("metadata"), dict):
        problem = f"metadata is {summarize(output.get('metadata'), 60)}"
    shape = check(
        not problem,
        "ors.call.tooloutput-shape",
        expected="blocks: Blocks, finished: bool, metadata: object or null",
        actual=problem or "well formed",
    )
    return [shape, judge_reward(output.get("reward"))]


def judge_reward(reward: Any) -> Decision:
    clause = "ors.call.reward-number"
    expected = "a finite number or null"
    if reward is None:
        return passed(clause, actual="null", expected=expected)
    if isinstance(reward, NonFinite) or (isinstance(reward, float) and not math.isfinite(reward)):
        return missed(clause, expected=expected, actual=f"{reward} (not a JSON number)")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        return passed(clause, actual=repr(reward), expected=expected)
    return missed(clause, expected=expected, actual=f"{type(reward).__name__} {summarize(reward, 60)}")


def judge_stream(stream: OrsStream) -> list[Decision]:
    """Every rule one finished call stream is held to (chunking only when it was chunked)."""
    decisions = [judge_first_event(stream), judge_terminal(stream)]
    if "chunk" in stream.names():
        decisions.append(judge_chunks(stream))
    result, problem = result_of(stream)
    if not problem:
        decisions += judge_result(result)
    return decisions


def judge_call(call: ToolCall) -> list[Decision]:
    """A call of a listed tool: a 200 answer is an event stream held to every stream rule; others say nothing here."""
    if call.reply is None or call.reply.status != 200:
        return []
    return [judge_content_type(call.reply), *(judge_stream(call.stream) if call.stream.events else [])]


def judge_refusal(clause: str, reply: Reply, stream: OrsStream) -> Decision:
    """A call that must not run: refused with a 4xx, or an end with ok:false; a 5xx, ok:true or no answer miss."""
    if refused(reply):
        return passed(clause, actual=f"{reply.status}", expected=REFUSED)
    result, problem = result_of(stream)
    if not problem and isinstance(result, dict) and result.get("ok") is False:
        return passed(clause, actual="end with ok:false", expected=REFUSED)
    ran = problem or reply.status != 200
    return missed(clause, expected=REFUSED, actual=reply.describe(100) if ran else f"ran: {stream.describe()}")


def judge_missing_input(reply: Reply) -> Decision:
    return check(refused(reply), "ors.call.missing-input", expected="a 4xx", actual=reply.describe(100))


def judge_resume(
    original: OrsStream, replay: OrsStream, cut: OrsStream, resumed: OrsStream, again: OrsStream
) -> Decision:
    """A finished call replayed by its task_id, and a call cut after its task_id resumed twice."""
    expected = "the replay of a finished call answers its result again, byte for byte; a cut call resumes once"
    first, wrong = reassembled(original) or "", []
    if reassembled(replay) != first:
        wrong.append(f"replay after end: {replay.describe()} ({(reassembled(replay) or '')[:80]!r} vs {first[:80]!r})")
    if not cut.task_id():
        wrong.append(f"the cut stream gave no task_id: {cut.describe()}")
    elif reassembled(resumed) is None:
        wrong.append(f"resume after the cut gave no result: {resumed.describe()}")
    elif reassembled(again) != reassembled(resumed):
        wrong.append(f"two replays of one call differ: the tool ran again ({(reassembled(again) or '')[:80]!r})")
    return check(not wrong, "ors.call.resume", expected=expected, actual="; ".join(wrong) or "replayed")


def judge_task_ids(calls: Sequence[ToolCall]) -> Decision | None:
    """Fresh calls that got one task_id cannot be told apart by a replay (None when every id differs)."""
    seen: dict[str, str] = {}
    for call in calls:
        task_id = call.stream.task_id()
        if task_id and task_id in seen:
            return missed(
                "ors.call.resume",
                expected="a task_id of its own for every call, so a replay names one call",
                actual=f"{seen[task_id]} and {call.name} both got task_id {truncate(task_id, 40)}",
            )
        seen[task_id] = call.name
    return None


def note_unknown_task_id(reply: Reply, stream: OrsStream) -> Decision:
    shown = f"{reply.status}: events {stream.describe()}" if stream.events else reply.describe(100)
    return info("ors.call.unknown-task-id", actual=shown)


def judge_raising_tool(reply: Reply, stream: OrsStream) -> Decision:
    """A tool known to raise (named in the options): an error event, or an end with ok:false."""
    clause = "ors.call.error-event"
    expected = "the stream ends with an error event, or an end with ok:false"
    result, problem = result_of(stream)
    if server_error(reply) or terminal_problem(stream):
        return missed(
            clause, expected=expected, actual=f"{reply.status}: {terminal_problem(stream) or reply.describe(100)}"
        )
    if stream.events[-1][0] == "error" or (not problem and isinstance(result, dict) and result.get("ok") is False):
        return passed(clause, actual=f"ends with {stream.events[-1][0]}", expected=expected)
    return missed(clause, expected=expected, actual=f"the raising tool answered {stream.describe()}")


def judge_failing_tools(calls: Sequence[ToolCall]) -> Decision:
    """error-event from listed tools called with inputs their schemas allow, none named as raising.

    A tool that ends with an error event is the evidence of a pass. A 5xx is a failure reported as no
    stream; a stream cut right after its task_id, or a connection the server broke, is a failure not
    reported, once the same run has seen this server end a result with `end` (so a missing terminal
    event is not simply how it ends them all). A call with no answer in time decides nothing."""
    clause = "ors.call.error-event"
    expected = "a failing tool ends its stream with an error event, not a cut stream or a 5xx"
    ends = any(call.stream.first("end") is not None for call in calls)
    for call in calls:
        outcome = call.outcome()
        if outcome == "server error" and not _starting(call.reply):
            return missed(clause, expected=expected, actual=f"{call.describe()}: a 5xx from a listed tool")
        if outcome in ("cut", "broken") and ends:
            return missed(
                clause, expected=expected, actual=f"{call.describe()}: the stream ended without an error event"
            )
    raised = [call for call in calls if call.outcome() == "raised"]
    if raised:
        return passed(clause, actual=f"{raised[0].describe()}: {truncate(raised[0].stream.first('error') or '', 60)!r}")
    tried = ", ".join(f"{call.name}: {call.outcome()}" for call in calls) or "none"
    return info(clause, actual=f"not judged: no listed tool failed with the inputs its schema allows (tried {tried})")


def _starting(reply: Reply | None) -> bool:
    """openreward's 503 while an env's setup still runs, with Retry-After: a wait, not a failure."""
    return reply is not None and reply.status == 503 and bool(reply.header_values("retry-after"))


def judge_after_finished(stream: OrsStream, steps: int | None = None) -> Decision:
    """What a call after the one that answered finished: true (the `steps`-th call, when counted) answered."""
    clause = "ors.finished.after-finished"
    result, problem = result_of(stream)
    after = output_of(result)
    expected = "refused (ok:false or a 4xx), or run without a reward"
    finished = f"after {steps} calls, finished" if steps else "finished"
    if after is None:
        return passed(
            clause, actual=f"{finished}; the next call was refused: {problem or 'ok:false'}", expected=expected
        )
    if after.get("reward") is None:
        return info(clause, actual=f"{finished}; the next call ran without a reward")
    return missed(clause, expected=expected, actual=f"the call after finished ran and rewarded {after['reward']!r}")
