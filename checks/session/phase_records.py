"""SS-04, SS-05, SS-06, SS-07, SS-14: four weather-agent turns (the third streamed), then the records."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped, Report, Transcript
from checks.session.agent import SCHEDULE, Step, run_schedule
from checks.session.facts import base_request, client, metadata_of, records_of
from checks.session.judging import (
    envelope_problems,
    forced_field_problems,
    record_reply_problems,
    tito_problems,
    tool_id_problems,
)
from checks.session.options import Ctx
from checks.session.witness import BODY_CAP, Witness, check_witnessed

STREAMED = ("append_user",)


async def records_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "four turns, one streamed") as http:
        sid = await http.new_session()
        run = await run_schedule(http, sid, await base_request(ctx, http, sid), SCHEDULE[:4], STREAMED)
        bad = run.failed_step()
        if bad is not None:
            check_witnessed(
                report,
                False,
                "session.ss04.one-record-per-call",
                expected="200 for every turn of the weather agent",
                actual=f"{bad.event}: {bad.reply.describe()}",
                evidence=http.transcript,
                witness=Witness(bad.reply, records_of(bad.snapshot), "records after it"),
            )
            raise PhaseStopped(f"turn {bad.event} failed", http.transcript)
        await http.delete(sid)
    records = records_of(run.steps[-1].snapshot)
    _judge_calls(report, http.transcript, run.steps, records)
    _judge_tokens_and_fields(report, http.transcript, run.steps, records)


def _judge_calls(report: Report, evidence: Transcript, steps: list[Step], records: list[dict[str, Any]]) -> None:
    """SS-04 and SS-05: one record per call, each holding its reply."""
    problems = envelope_problems(records)
    recorded_ids = [(r.get("response") or {}).get("id") for r in records]
    unrecorded = next((s for s in steps if (s.reply.body or {}).get("id") not in recorded_ids), steps[-1])
    check_witnessed(
        report,
        len(records) == len(steps) and not problems,
        "session.ss04.one-record-per-call",
        expected=f"{len(steps)} records (one per call, the streamed one too), path /v1/chat/completions, "
        "status 200, ordered timestamps",
        actual=f"{len(records)} records; {'; '.join(problems) or 'envelopes as expected'}",
        evidence=evidence,
        witness=Witness(unrecorded.reply, records, f"the {len(records)} records after {steps[-1].event}"),
    )
    for step, record in zip(steps, records, strict=False):
        mismatch = record_reply_problems(step, record)
        check_witnessed(
            report,
            not mismatch,
            "session.ss05.record-matches-reply",
            expected=f"the record of {step.event} holds the reply's id, message and the messages sent",
            actual="; ".join(mismatch) or "as expected",
            evidence=evidence,
            witness=Witness(step.reply, record),
        )


def _judge_tokens_and_fields(
    report: Report, evidence: Transcript, steps: list[Step], records: list[dict[str, Any]]
) -> None:
    """SS-06, SS-07 and SS-14: token ids, the forced request fields and the stream, tool call ids."""
    snapshot = steps[-1].snapshot
    tito = tito_problems(records, metadata_of(snapshot))
    check_witnessed(
        report,
        not tito,
        "session.ss06.tito",
        expected="prefix-stable token ids across records, logprob counts equal completion_tokens, "
        "accumulated ids = last record's",
        actual="; ".join(tito) or "as expected",
        evidence=evidence,
        witness=Witness(
            steps[-1].reply,
            {"last record": records[-1] if records else None, "metadata": metadata_of(snapshot)},
            "last record and session metadata",
        ),
    )
    forced = forced_field_problems(records)
    streamed = next(s for s in steps if s.event in STREAMED)
    stream_info = (streamed.reply.body or {}).get("stream") or {}
    streamed_ok = streamed.reply.content_type.startswith("text/event-stream") and stream_info.get("done") is True
    shown = next((i for i, r in enumerate(records) if forced_field_problems([r])), steps.index(streamed))
    check_witnessed(
        report,
        not forced and streamed_ok,
        "session.ss07.forced-fields",
        expected="recorded requests carry input_ids, logprobs true, return_meta_info true, no stream; "
        "stream:true gives SSE ending in [DONE]",
        actual=f"{'; '.join(forced) or 'recorded requests as expected'}; "
        f"streamed call: {streamed.reply.content_type!r}, {stream_info}",
        evidence=evidence,
        witness=witness_of(steps, records, shown),
    )
    ids = tool_id_problems(records)
    citing = next((i for i in range(1, len(records)) if tool_id_problems(records[i - 1 : i + 1])), len(records) - 1)
    check_witnessed(
        report,
        not ids,
        "session.ss14.tool-call-ids",
        expected="each recorded tool message's tool_call_id names a call of the previous recorded reply",
        actual="; ".join(ids) or "as expected",
        evidence=evidence,
        witness=witness_of(steps, records, citing),
    )


def witness_of(steps: list[Step], records: list[dict[str, Any]], index: int) -> Witness | None:
    """Call `index` and its record (the stream as the agent assembled it); None when there is no such call."""
    if not 0 <= index < len(steps):
        return None
    step = steps[index]
    streamed = step.reply.content_type.startswith("text/event-stream")
    shown = step.reply.raw[: 2 * BODY_CAP].decode("utf-8", "replace") if streamed else None
    return Witness(step.reply, records[index] if index < len(records) else None, shown_reply=shown)
