"""SS-04, SS-05, SS-06, SS-07, SS-14: four weather-agent turns (the third streamed), then the records."""

from __future__ import annotations

from typing import Any

from checks.core import Report, Transcript
from checks.session import judging_phases
from checks.session.agent import SCHEDULE, Step, run_schedule
from checks.session.facts import base_request, client, metadata_of, records_of
from checks.session.judging import forced_field_problems, tool_id_problems
from checks.session.options import Ctx
from checks.session.witness import BODY_CAP, Witness, record_witnessed, stop_at_failed_turn

STREAMED = ("append_user",)


async def records_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "four turns, one streamed") as http:
        sid = await http.new_session()
        run = await run_schedule(http, sid, await base_request(ctx, http, sid), SCHEDULE[:4], STREAMED)
        bad = run.failed_step()
        if bad is not None:
            decision = judging_phases.turn_failed("session.ss04.one-record-per-call", bad, every_turn=True)
            stop_at_failed_turn(report, decision, http.transcript, bad, f"turn {bad.event} failed")
        await http.delete(sid)
    records = records_of(run.steps[-1].snapshot)
    _judge_calls(report, http.transcript, run.steps, records)
    _judge_tokens_and_fields(report, http.transcript, run.steps, records)


def _judge_calls(report: Report, evidence: Transcript, steps: list[Step], records: list[dict[str, Any]]) -> None:
    """SS-04 and SS-05: one record per call, each holding its reply."""
    recorded_ids = [(r.get("response") or {}).get("id") for r in records]
    unrecorded = next((s for s in steps if (s.reply.body or {}).get("id") not in recorded_ids), steps[-1])
    witness = Witness(unrecorded.reply, records, f"the {len(records)} records after {steps[-1].event}")
    record_witnessed(report, judging_phases.one_record_per_call(steps, records), evidence, witness)
    for step, record in zip(steps, records, strict=False):
        record_witnessed(
            report, judging_phases.record_matches_reply(step, record), evidence, Witness(step.reply, record)
        )


def _judge_tokens_and_fields(
    report: Report, evidence: Transcript, steps: list[Step], records: list[dict[str, Any]]
) -> None:
    """SS-06, SS-07 and SS-14: token ids, the forced request fields and the stream, tool call ids."""
    snapshot = steps[-1].snapshot
    witness = Witness(
        steps[-1].reply,
        {"last record": records[-1] if records else None, "metadata": metadata_of(snapshot)},
        "last record and session metadata",
    )
    record_witnessed(report, judging_phases.tito(records, metadata_of(snapshot)), evidence, witness)
    streamed = next(s for s in steps if s.event in STREAMED)
    shown = next((i for i, r in enumerate(records) if forced_field_problems([r])), steps.index(streamed))
    record_witnessed(
        report, judging_phases.forced_fields(records, streamed), evidence, witness_of(steps, records, shown)
    )
    citing = next((i for i in range(1, len(records)) if tool_id_problems(records[i - 1 : i + 1])), len(records) - 1)
    record_witnessed(report, judging_phases.tool_call_ids(records), evidence, witness_of(steps, records, citing))


def witness_of(steps: list[Step], records: list[dict[str, Any]], index: int) -> Witness | None:
    """Call `index` and its record (the stream as the agent assembled it); None when there is no such call."""
    if not 0 <= index < len(steps):
        return None
    step = steps[index]
    streamed = step.reply.content_type.startswith("text/event-stream")
    shown = step.reply.raw[: 2 * BODY_CAP].decode("utf-8", "replace") if streamed else None
    return Witness(step.reply, records[index] if index < len(records) else None, shown_reply=shown)
