"""A failing session-server clause shows the request sent, the reply and the record side by side."""

import json

import pytest

from checks.core import Report, Verdict, run_suite
from checks.session.suite import SUITE
from tests.zoo.session_server.catalogue import ZOO, start


def side_by_side_shown(report: Report, clause: str) -> list[str]:
    """What is missing from the failing `clause`'s evidence; [] when the request, reply and record are all there."""
    result = next(r for r in report.results.values() if r.clause_id == clause and r.verdict is Verdict.FAIL)
    missing = []
    if "request " not in result.expected:
        missing.append(f"expected= names no request: {result.expected}")
    if "reply " not in result.actual:
        missing.append(f"actual= shows no reply: {result.actual}")
    transcripts = [report.transcripts[i] for i in result.transcript_ids]
    witness = next((t for t in transcripts if t.label.startswith(f"side by side for {clause}")), None)
    if witness is None:
        return [*missing, f"no side-by-side transcript among {[t.label for t in transcripts]}"]
    directions = {frame.direction for frame in witness.frames}
    if not {"sent", "received", "note"} <= directions:
        missing.append(f"the side-by-side transcript holds {directions}")
    sent = "".join(f.summary.split("]: ", 1)[1] for f in witness.frames if f.direction == "sent")
    try:
        json.loads(sent)  # whole, or cut at the cap with the length said
    except ValueError:
        if not sent.endswith(" chars)"):
            missing.append(f"the request body is neither whole nor capped: {sent[-80:]!r}")
    return missing


# Different clauses, a record-less call among them (SS-01), a streamed call's record (SS-07) and /samples (SS-12).
async def zoo_report(name: str, phases: list[str]) -> Report:
    """The suite's report on the zoo's server `name` (phases `phases`, 5 s deadlines); the server closed after."""
    running = await start(name)
    try:
        return await run_suite(SUITE, running.url, {"timeout": 5}, phases)
    finally:
        await running.close()


@pytest.mark.parametrize(
    "name, phases",
    [
        ("health-without-status", ["health"]),
        ("records-other-content", ["records"]),
        ("records-keep-stream", ["records"]),
        ("records-failed-calls", ["failures"]),
        ("truncation-not-guarded", ["retry"]),
        ("float32-samples", ["samples"]),
    ],
)
async def test_failing_clause_shows_request_reply_and_record(name, phases):
    report = await zoo_report(name, phases)
    assert side_by_side_shown(report, ZOO[name].clause) == []


async def test_the_transcript_keeps_the_bodies_whole_up_to_the_cap():
    running = await start("records-other-content")
    try:
        report = await run_suite(SUITE, running.url, {"timeout": 5}, ["records"])
    finally:
        await running.close()
    result = next(r for r in report.results.values() if r.clause_id == "session.ss05.record-matches-reply")
    witness = report.transcripts[result.transcript_ids[-1]]
    record = "".join(f.summary.split("]: ", 1)[1] for f in witness.frames if f.direction == "note")
    assert '"input_ids": [' in record and '"output_token_logprobs"' in record
    assert all(len(f.summary) <= 400 for f in witness.frames)
