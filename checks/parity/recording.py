"""A recording: what one target answered to a parity script, and the golden file that keeps it."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checks.core import Transcript
from checks.parity.encoding import BadEncoding, decode, encode
from checks.parity.values import Map, Node

GOLDEN_FORMAT = "rlconform-parity-golden"
GOLDEN_VERSION = 1


@dataclass
class Recording:
    """`values` is a map of everything the target showed; `unjudgeable` says why it cannot be compared."""

    kind: str
    target: str
    script_version: str
    inputs: dict[str, Any]  # the options that decide what the script sends
    values: Node = field(default_factory=lambda: Map(()))
    unjudgeable: str | None = None
    summary: str = ""
    evidence: list[Transcript] = field(default_factory=list)
    recorded_at: str = field(default_factory=lambda: datetime.datetime.now(datetime.UTC).isoformat())

    def to_golden(self) -> dict[str, Any]:
        return {
            "format": GOLDEN_FORMAT,
            "version": GOLDEN_VERSION,
            "kind": self.kind,
            "target": self.target,
            "script_version": self.script_version,
            "inputs": self.inputs,
            "recorded_at": self.recorded_at,
            "summary": self.summary,
            "unjudgeable": self.unjudgeable,
            "values": encode(self.values),
        }


def recording_from_golden(document: Any) -> Recording:
    if not isinstance(document, dict) or document.get("format") != GOLDEN_FORMAT:
        raise BadEncoding(f'not a golden recording (no "format": "{GOLDEN_FORMAT}")')
    if document.get("version") != GOLDEN_VERSION:
        raise BadEncoding(f"golden version {document.get('version')!r}; this build reads {GOLDEN_VERSION}")
    inputs = document.get("inputs")
    return Recording(
        kind=str(document.get("kind")),
        target=str(document.get("target")),
        script_version=str(document.get("script_version")),
        inputs=inputs if isinstance(inputs, dict) else {},
        values=decode(document.get("values")),
        unjudgeable=document.get("unjudgeable") if isinstance(document.get("unjudgeable"), str) else None,
        summary=str(document.get("summary", "")),
        recorded_at=str(document.get("recorded_at", "")),
    )


def save_golden(recording: Recording, path: str | Path) -> None:
    Path(path).write_text(json.dumps(recording.to_golden(), indent=1, sort_keys=True) + "\n")


def load_golden(path: str | Path) -> Recording:
    try:
        document = json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise BadEncoding(f"{path} is not JSON: {exc}") from None
    return recording_from_golden(document)
