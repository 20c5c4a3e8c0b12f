"""Running the openenv suite in tests and reading its verdicts."""

from __future__ import annotations

from typing import Any

from checks.core import Report, Verdict, run_suite, worst
from checks.registry import get_suite


async def check(url: str, options: dict[str, Any], phases: list[str] | None = None) -> Report:
    return await run_suite(get_suite("openenv"), url, options, phases)


def verdicts(report: Report, *wanted: Verdict) -> dict[str, list[str]]:
    """clause id -> what was seen, for every result with one of the `wanted` verdicts."""
    found: dict[str, list[str]] = {}
    for result in report.results.values():
        if result.verdict in wanted:
            found.setdefault(result.clause_id, []).append(f"[{result.phase}] {result.expected} / {result.actual}")
    return found


def verdict_of(report: Report, clause_id: str) -> Verdict | None:
    """The worst verdict `clause_id` got in any phase."""
    return worst(r.verdict for r in report.results.values() if r.clause_id == clause_id)
