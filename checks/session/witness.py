"""The exchange a session-server verdict rests on, shown side by side: the request sent, the reply, the record.

A failing clause's expected= names the request and its actual= the reply and
what the server recorded of it, each summarized; a transcript of its own
keeps the three bodies whole, up to a cap, split over as many frames as the
transcript's per-frame limit needs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, NoReturn

from checks.core import PhaseStopped, Report, Transcript, summarize, truncate
from checks.decision import Decision, record
from checks.evidence import SUMMARY_LIMIT
from checks.http_client import Reply
from checks.session.agent import Step
from checks.session.facts import records_of

BODY_CAP = 8000  # characters of each body the side-by-side transcript keeps


@dataclass
class Witness:
    """One call and what the server kept of it. `record` is a record, a GET body, records... whatever proves it."""

    reply: Reply
    record: Any
    record_label: str = "record"
    shown_reply: Any = None  # the reply as decoded when its raw body is not JSON (an SSE stream, safetensors)

    def request_line(self) -> str:
        return f"{self.reply.method} {self.reply.path}"

    def reply_body(self) -> Any:
        if self.shown_reply is not None:
            return self.shown_reply
        return self.reply.body if self.reply.is_json else self.reply.raw[: BODY_CAP * 2].decode("utf-8", "replace")

    def expected_text(self) -> str:
        return f"request {self.request_line()} {summarize(compact(self.reply.sent), 200)}"

    def actual_text(self) -> str:
        return (
            f"reply {self.reply.status} {summarize(compact(self.reply_body()), 160)}; "
            f"{self.record_label} {summarize(compact(self.record), 200)}"
        )

    def transcript(self, report: Report, clause_id: str) -> Transcript:
        transcript = report.transcript(f"side by side for {clause_id}: request, reply, {self.record_label}")
        sent = body_text(self.reply.sent)
        for part in frames(f"{self.request_line()} body", sent):
            transcript.sent("http", len(sent), part)
        answered = body_text(self.reply_body())
        for part in frames(f"{self.reply.status} {self.reply.content_type or '(no content type)'} body", answered):
            transcript.received("http", len(self.reply.raw), part)
        for part in frames(self.record_label, body_text(self.record)):
            transcript.note(part)
        return transcript


def compact(value: Any) -> Any:
    """What a reader compares at a glance: a request's last message, a reply's id and message, a record's both."""
    if isinstance(value, list):
        return [compact(item) for item in value]
    if not isinstance(value, dict):
        return value
    if "request" in value and "response" in value:
        return {"request": compact(value["request"]), "response": compact(value["response"])}
    if isinstance(value.get("records"), list):
        return {**{k: v for k, v in value.items() if k != "metadata"}, "records": compact(value["records"])}
    if isinstance(value.get("choices"), list) and value["choices"] and isinstance(value["choices"][0], dict):
        choice = value["choices"][0]
        return {"id": value.get("id"), "message": choice.get("message"), "finish_reason": choice.get("finish_reason")}
    if isinstance(value.get("messages"), list):
        return {"messages": [f"…{len(value['messages']) - 1} before", *value["messages"][-1:]]}
    return value


def _plain(value: Any) -> Any:
    if hasattr(value, "dtype") and hasattr(value, "ravel"):
        return {"dtype": value.dtype.str, "shape": list(value.shape), "values": value.ravel()[:BODY_CAP].tolist()}
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    return repr(value)


def body_text(value: Any) -> str:
    """A body as compact JSON (text as is), cut at BODY_CAP characters with the length said."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=_plain)
    return truncate(text, BODY_CAP)


def frames(title: str, text: str) -> list[str]:
    """`text` in pieces that fit a transcript frame whole (a longer frame would be cut), each titled."""
    title = truncate(title, 120)
    size = SUMMARY_LIMIT - len(title) - len(" [999/999]: ")
    parts = [text[i : i + size] for i in range(0, len(text), size)] or [""]
    return [f"{title} [{n}/{len(parts)}]: {part}" for n, part in enumerate(parts, 1)]


def record_witnessed(report: Report, decision: Decision, evidence: Transcript, witness: Witness | None) -> bool:
    """Record a judge's decision; a miss shows the witness side by side in expected/actual, with its own
    transcript. Whether the clause held."""
    if not decision.missed or witness is None:
        return record(report, decision, evidence)
    shown = replace(
        decision,
        expected=f"{truncate(decision.expected, 300)} | {witness.expected_text()}",
        actual=f"{truncate(decision.actual, 220)} | {witness.actual_text()}",
    )
    return record(report, shown, [evidence, witness.transcript(report, decision.clause_id)])


def stop_at_failed_turn(report: Report, decision: Decision, evidence: Transcript, step: Step, says: str) -> NoReturn:
    """Record `decision` on a turn of the schedule that failed, witnessed by its reply beside the records
    after it, and stop the phase saying `says`."""
    record_witnessed(report, decision, evidence, Witness(step.reply, records_of(step.snapshot), "records after it"))
    raise PhaseStopped(says, evidence)
