"""Reading SPEC.md: every clause line is `- **LEVEL** `clause.id`: statement`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SPEC_PATH = Path(__file__).resolve().parent.parent / "SPEC.md"
CLAUSE_LINE = re.compile(r"^- \*\*(MUST|SHOULD|INFO)\*\* `([^`]+)`: (.+)$")


@dataclass(frozen=True)
class SpecClause:
    id: str
    level: str
    statement: str
    section: str  # the nearest heading above the clause line


def parse_spec(text: str) -> dict[str, SpecClause]:
    clauses: dict[str, SpecClause] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            continue
        match = CLAUSE_LINE.match(line.strip())
        if match:
            level, clause_id, statement = match.groups()
            if clause_id in clauses:
                raise ValueError(f"SPEC.md declares {clause_id} twice")
            clauses[clause_id] = SpecClause(clause_id, level, statement.strip(), section)
    return clauses


def load_spec(path: Path = SPEC_PATH) -> dict[str, SpecClause]:
    return parse_spec(path.read_text(encoding="utf-8"))
