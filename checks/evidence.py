"""Evidence: what a check saw on the wire, bounded so a hostile target costs little.

A `Transcript` keeps every frame of one connection a phase opened (direction,
time offset, size, kind, a capped summary, and the close with who closed it).
`summarize` and `truncate` make target-supplied values safe to show.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

SUMMARY_LIMIT = 400
TRANSCRIPT_FRAME_LIMIT = 400


def visible_escape(match: re.Match[str]) -> str:
    """A matched character written as `\\x00` or `\\ud800`, so the evidence still shows what was sent."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class CutText(str):
    """A target's string the checker did not decode whole: its head, and its full size in bytes.

    Decoders return one in place of a string too long to decode, copy or show;
    it compares unequal to any short string a check looks for.
    """

    size: int

    def __new__(cls, head: str, size: int) -> CutText:
        text = super().__new__(cls, head)
        text.size = size
        return text


def truncate(text: str, limit: int = 200) -> str:
    """A target's string, safe to show: cut to `limit` characters with the length said."""
    if isinstance(text, CutText):
        return f"{text[:limit]}… ({text.size} bytes, cut)"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} chars)"


def summarize(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """A short, bounded, readable rendering of a decoded message.

    Arrays show dtype and shape (and a few values), bytes show their length,
    long strings and big containers are cut. Never walks more than `limit`
    characters' worth of structure, so a hostile message costs little.
    """
    summary = _Summary(limit)
    summary.walk(value, 0)
    text = "".join(summary.out)
    return text if len(text) < limit else text[: limit - 1] + "…"


class _Summary:
    """The text `summarize` builds, and how many characters it may still add."""

    def __init__(self, limit: int) -> None:
        self.out: list[str] = []
        self.budget = limit

    def emit(self, text: str) -> bool:
        if self.budget <= 0:
            return False
        self.out.append(text[: self.budget])
        self.budget -= len(text)
        return self.budget > 0

    def walk(self, item: Any, depth: int) -> None:
        if self.budget <= 0:
            return
        if depth > 6:
            self.emit("…")
        elif hasattr(item, "dtype") and hasattr(item, "shape") and hasattr(item, "ravel"):
            head = item.ravel()[:4].tolist() if item.size else []
            more = "…" if item.size > 4 else ""
            self.emit(f"ndarray {item.dtype.str} {list(item.shape)} {head}{more}".replace("]…", "…]"))
        elif isinstance(item, dict):
            self.walk_dict(item, depth)
        elif isinstance(item, (list, tuple)):
            self.walk_sequence(item, depth)
        else:
            self.emit(_scalar_summary(item))

    def walk_dict(self, item: dict[Any, Any], depth: int) -> None:
        self.emit("{")
        for index, (key, sub) in enumerate(item.items()):
            if index >= 12:
                self.emit(f", …+{len(item) - 12} keys")
                break
            if index:
                self.emit(", ")
            self.emit(f"{truncate(repr(key), 40)}: ")
            self.walk(sub, depth + 1)
        self.emit("}")

    def walk_sequence(self, item: list[Any] | tuple[Any, ...], depth: int) -> None:
        self.emit("[")
        for index, sub in enumerate(item):
            if index >= 8:
                self.emit(f", …+{len(item) - 8}")
                break
            if index:
                self.emit(", ")
            self.walk(sub, depth + 1)
        self.emit("]")


def _scalar_summary(item: Any) -> str:
    """A leaf of a summarized message: bytes by their length, strings and the rest by their cut repr."""
    if isinstance(item, (bytes, bytearray, memoryview)):
        return f"<{len(item)} bytes>"
    if isinstance(item, CutText):
        return f"{str.__repr__(item[:80])}… ({item.size} bytes, cut)"
    if isinstance(item, str):
        return repr(truncate(item, 80))
    return truncate(repr(item), 80)


# A frame's summary, or how to make it: a transport on a hot path (one gRPC step after another) hands over
# a function, run when the summary is first read (a page, a report, a test) rather than on every step.
Summary = str | Callable[[], str]


class Frame:
    """One event on a connection, as the transcript keeps it."""

    __slots__ = ("direction", "t", "size", "kind", "_summary")

    def __init__(self, direction: str, t: float, size: int, kind: str, summary: Summary) -> None:
        self.direction = direction  # "sent", "received", "closed" or "note"
        self.t = t  # seconds since the connection opened
        self.size = size
        self.kind = kind  # "binary", "text", "close", "http", "grpc", "note" ...
        self._summary = summary if callable(summary) else truncate(summary, SUMMARY_LIMIT)

    @property
    def summary(self) -> str:
        if callable(self._summary):
            self._summary = truncate(self._summary(), SUMMARY_LIMIT)
        return self._summary

    def __repr__(self) -> str:
        return f"Frame({self.direction!r}, {self.t:.6f}, {self.size}, {self.kind!r}, {self.summary!r})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "t": round(self.t, 6),
            "size": self.size,
            "kind": self.kind,
            "summary": self.summary,
        }


# What `Transcript.progress` gives: frames kept, frames dropped, who closed, the close code, the label.
Progress = tuple[int, int, str | None, int | None, str]


@dataclass
class Transcript:
    """Every frame of one connection a phase opened, bounded in size."""

    id: int
    phase: str
    label: str
    frames: list[Frame] = field(default_factory=list)
    dropped: int = 0
    close_code: int | None = None
    close_reason: str | None = None
    closed_by: str | None = None  # "target", "checker" or "network"
    started: float = field(default_factory=time.monotonic)

    def _add(self, direction: str, size: int, kind: str, summary: Summary) -> None:
        if len(self.frames) >= TRANSCRIPT_FRAME_LIMIT:
            self.dropped += 1
            return
        t = time.monotonic() - self.started
        self.frames.append(Frame(direction, t, size, kind, summary))

    def sent(self, kind: str, size: int, summary: Summary) -> None:
        self._add("sent", size, kind, summary)

    def received(self, kind: str, size: int, summary: Summary) -> None:
        self._add("received", size, kind, summary)

    def note(self, text: str) -> None:
        self._add("note", 0, "note", text)

    def closed(self, code: int | None, reason: str | None, by: str) -> None:
        if self.closed_by is not None:
            return
        self.close_code, self.closed_by = code, by
        self.close_reason = truncate(reason, 200) if reason is not None else None
        self._add("closed", 0, "close", f"closed by {by}: code {code}, reason {self.close_reason!r}")

    def progress(self) -> Progress:
        """What changes as the connection goes on (a frame, kept or dropped, or its close): equal progress
        means nothing new to record, since frames are only ever appended."""
        return len(self.frames), self.dropped, self.closed_by, self.close_code, self.label

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": self.phase,
            "label": self.label,
            "frames": [frame.to_dict() for frame in self.frames],
            "dropped": self.dropped,
            "close_code": self.close_code,
            "close_reason": self.close_reason,
            "closed_by": self.closed_by,
        }


# What a decision or a stopped phase may point at: the transcripts of the connections that show it.
Evidence = Transcript | Sequence[Transcript] | None


def evidence_list(evidence: Evidence) -> list[Transcript]:
    """The transcripts `evidence` names, as a list (none for None)."""
    if evidence is None:
        return []
    if isinstance(evidence, Transcript):
        return [evidence]
    return list(evidence)
