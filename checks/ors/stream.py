"""Reading ORS answers, deciding nothing: a call's SSE events, its RunToolOutput, a /create_session id.

The SSE grammar is the one parser of `checks.http_client`; ORS's own layer
(task_id first, one terminal event, chunk data joined before end data) is read
here and judged in `checks.ors.judging`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from checks.evidence import truncate
from checks.http_client import Reply, SseParser

TERMINAL = ("end", "error")


class NonFinite(float):
    """A NaN or Infinity token in JSON text (Python's json writes them; JSON has no such numbers)."""


def _non_finite(token: str) -> NonFinite:
    return NonFinite(token.replace("Infinity", "inf"))


def strict_json(text: str) -> tuple[Any, str]:
    """The JSON value of `text` and "" , or (None, why it is not JSON); NaN/Infinity come back as `NonFinite`."""
    try:
        return json.loads(text, parse_constant=_non_finite), ""
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON ({truncate(str(exc), 80)}): {truncate(text, 120)!r}"


@dataclass
class OrsStream:
    """A call stream as ORS reads it: its events as (type, data), and its comment lines (keep-alive pings)."""

    events: list[tuple[str, str]] = field(default_factory=list)
    comments: int = 0

    def names(self) -> list[str]:
        return [name for name, _ in self.events]

    def first(self, name: str) -> str | None:
        return next((data for event, data in self.events if event == name), None)

    def task_id(self) -> str:
        """The stream's task id when its first event carries one, else ""."""
        return self.events[0][1].strip() if self.events and self.events[0][0] == "task_id" else ""

    def describe(self) -> str:
        shown = ", ".join(f"{name}({len(data)} chars)" for name, data in self.events[:12])
        return f"[{shown}{', ...' if len(self.events) > 12 else ''}]"


def parse_stream(text: str) -> OrsStream:
    """The events of an SSE body (CR, LF or CRLF end lines), read by the one SSE parser."""
    parser = SseParser()
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        parser.feed(line)
    parser.end()
    return OrsStream(list(parser.events.named), parser.events.comments)


def is_sse(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


def terminal_problem(stream: OrsStream) -> str:
    """Why the stream is not ended by exactly one end or error with nothing after it ("" when it is)."""
    terminals = [i for i, name in enumerate(stream.names()) if name in TERMINAL]
    if not terminals:
        return f"no end or error event: {stream.describe()}"
    if len(terminals) > 1 or terminals[0] != len(stream.events) - 1:
        return f"events after the terminal {stream.events[terminals[0]][0]}: {stream.describe()}"
    return ""


def reassembled(stream: OrsStream) -> str | None:
    """The RunToolOutput text: every chunk's data, then the end's, joined; None without an end event."""
    end = stream.first("end")
    if end is None:
        return None
    chunks = [data for name, data in stream.events if name == "chunk"]
    return "".join(chunks) + end


def result_of(stream: OrsStream) -> tuple[Any, str]:
    """The parsed RunToolOutput of a stream ending in end, or (None, why there is none)."""
    text = reassembled(stream)
    if text is None:
        error = stream.first("error")
        return None, f"error event {truncate(error, 80)!r}" if error is not None else f"no end: {stream.describe()}"
    return strict_json(text)


def output_of(result: Any) -> dict[str, Any] | None:
    """The ToolOutput of an ok:true RunToolOutput, else None."""
    output = result.get("output") if isinstance(result, dict) and result.get("ok") is True else None
    return output if isinstance(output, dict) else None


def sid_of(reply: Reply) -> tuple[str | None, str]:
    """The id a /create_session answer carries and its form ("json" or "sse"), or (None, what came)."""
    if reply.status == 200 and isinstance(reply.body, dict) and isinstance(reply.body.get("sid"), str):
        return (reply.body["sid"] or None), "json"
    if reply.status == 200 and is_sse(reply.content_type):
        stream = parse_stream(reply.text)
        end, _ = strict_json(stream.first("end") or "null")
        if isinstance(end, dict) and isinstance(end.get("sid"), str) and end["sid"]:
            return end["sid"], "sse"
        sid = (stream.first("task_id") or "").strip()
        return (sid or None), "sse"
    return None, reply.describe(120)


def refused(reply: Reply) -> bool:
    return 400 <= reply.status < 500


def server_error(reply: Reply) -> bool:
    return reply.status >= 500 or reply.status == 0


CallOutcome = Literal["ok", "refused", "raised", "cut", "broken", "server error", "no answer", "other"]


@dataclass
class ToolCall:
    """One /call as observed: the body sent, the reply (None: no usable answer, `failure` says why, and
    `broken` whether the server broke the connection rather than stayed silent), its stream."""

    body: dict[str, Any]
    reply: Reply | None
    stream: OrsStream = field(default_factory=OrsStream)
    failure: str = ""
    broken: bool = False

    @property
    def name(self) -> str:
        return str(self.body.get("name"))

    def outcome(self) -> CallOutcome:
        """What the call came to: a result (ok or refused), an error event, a stream cut after its task_id, ..."""
        if self.reply is None:
            return "broken" if self.broken else "no answer"
        if server_error(self.reply):
            return "server error"
        result, problem = result_of(self.stream)
        if not problem and isinstance(result, dict) and isinstance(result.get("ok"), bool):
            return "ok" if result["ok"] else "refused"
        if self.stream.names()[-1:] == ["error"]:
            return "raised"
        if self.stream.task_id() and self.stream.names() == ["task_id"]:
            return "cut"
        return "other"

    def describe(self) -> str:
        if self.reply is None:
            return f"{self.name}: {self.outcome()} ({self.failure})"
        shown = self.stream.describe() if self.stream.events else self.reply.describe(80)
        return f"{self.name}: {self.reply.status} {shown}"
