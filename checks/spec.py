"""Reading SPEC.md: every clause line is `- **LEVEL** `clause.id`: statement`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SPEC_PATH = Path(__file__).resolve().parent.parent / "SPEC.md"
CLAUSE_LINE = re.compile(r"^- \*\*(MUST|SHOULD|INFO)\*\* `([^`]+)`: (.+)$")
ALIAS_LINE = re.compile(r"^- alias `([^`]+)` → `([^`]+)`: (.+)$")


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


def parse_aliases(text: str) -> dict[str, str]:
    """Old clause id -> the id of the clause that now covers it."""
    aliases: dict[str, str] = {}
    for line in text.splitlines():
        match = ALIAS_LINE.match(line.strip())
        if match:
            old, new, _ = match.groups()
            if old in aliases:
                raise ValueError(f"SPEC.md aliases {old} twice")
            aliases[old] = new
    return aliases


def load_aliases(path: Path = SPEC_PATH) -> dict[str, str]:
    return parse_aliases(path.read_text(encoding="utf-8"))
