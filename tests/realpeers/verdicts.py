"""Every real peer's rolled-up verdicts with default options (or the profile it claims), as a table.

A peer's test holds its run to its table exactly: a clause not listed must pass,
a listed one must get the listed verdict, so any change of verdict is seen.
docs/real-peers.md gives, for each non-pass verdict here, the line of the peer's
source that makes it a true fault. `test_every_clause_decidable` reads the tables
for the clauses each peer passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from checks.core import Report


@dataclass(frozen=True)
class PeerTable:
    """One real peer run: its kind, and every clause whose rolled-up verdict is not `pass`."""

    kind: str
    not_passing: Mapping[str, str]


def rolled(report: Report) -> dict[str, str]:
    return {entry.clause_id: str(entry.verdict) for entry in report.rolled_up()}


def differences(report: Report, table: PeerTable, clause_ids: set[str]) -> dict[str, tuple[str, str]]:
    """(expected, actual) for every clause of the catalogue whose verdict is not the table's."""
    got = rolled(report)
    expected = {clause_id: table.not_passing.get(clause_id, "pass") for clause_id in clause_ids}
    return {c: (expected[c], got.get(c, "absent")) for c in sorted(clause_ids) if got.get(c, "absent") != expected[c]}


# transformers 5.23 `transformers serve` on a tiny random Llama, checked as openai-chat with the
# profile it claims: no logprobs and no parallel calls (both in its ignored fields), and no tool calls
# from a random model. tests/realpeers/transformers/test_transformers_serve.py holds it.
TRANSFORMERS_SERVE = PeerTable(
    "openai-chat",
    {
        "openai.chat.n-choices": "warn",
        "openai.stream.format": "fail",
        "openai.stream.usage-chunk": "warn",
        "openai.stream.equivalent": "info",
        "openai.errors.rejects-invalid": "fail",
        "openai.errors.status-400": "warn",
        "openai.errors.shape": "fail",
        "openai.messages.unknown-role": "warn",
        "openai.unicode.round-trip": "info",
        "openai.auth.required": "unsupported",
        "openai.concurrency.latency": "info",
        "openai.limits.context-overflow": "unsupported",
        "openai.logprobs.content": "unsupported",
        "openai.tools.call-shape": "unsupported",
        "openai.tools.parallel": "unsupported",
        "openai.tools.truncated-call": "unsupported",
        "openai.tools.round-trip": "unsupported",
        "openai.tools.result-by-id": "unsupported",
        "openai.tools.unknown-call-id": "unsupported",
    },
)
