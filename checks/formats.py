"""A report as text for people, JSON for scripts and JUnit XML for CI.

All three count clauses, rolled up across phases (`checks.verdicts.roll_up`), so
they agree with each other and with the service's pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any
from xml.etree import ElementTree as ET

from checks.evidence import visible_escape
from checks.report import HARNESS_VERSION
from checks.verdicts import Outcome, RolledUp, RootCause, Verdict, roll_up, root_causes, verdict_counts

Result = Mapping[str, Any]

# Every character XML 1.0 forbids; a target may put any of them into a close reason or an error text.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")

MARKS = {
    Verdict.PASS: "ok  ",
    Verdict.FAIL: "FAIL",
    Verdict.WARN: "warn",
    Verdict.INFO: "info",
    Verdict.UNSUPPORTED: "n/a ",
    Verdict.SKIP: "skip",
    Verdict.ERROR: "ERR ",
}
SHOWN_IDS = 8  # clause ids listed under one root cause before "and N more"


def reason(result: Result) -> str:
    """What a result says, in one phrase: what was observed, or expected vs got."""
    actual, expected = str(result.get("actual", "")), str(result.get("expected", ""))
    if Verdict(result["verdict"]) is Verdict.PASS:
        return actual
    if expected and actual:
        return f"expected {expected}; got {actual}"
    return actual or expected


def rolled_up(results: Iterable[Result]) -> list[RolledUp[Result]]:
    """One entry per clause, from result dicts (as `ClauseResult.to_dict` and the API give them)."""
    return roll_up(results, lambda r: (str(r["clause_id"]), str(r["verdict"])))


def causes_of(rolled: Iterable[RolledUp[Result]]) -> list[RootCause[Result]]:
    """The events that left clauses undecided, biggest first (see `checks.verdicts.root_causes`)."""
    return root_causes(rolled, lambda r: (str(r["phase"]), str(r.get("actual", ""))))


def _ids(clause_ids: list[str]) -> str:
    shown = ", ".join(clause_ids[:SHOWN_IDS])
    more = len(clause_ids) - SHOWN_IDS
    return shown + (f" and {more} more" if more > 0 else "")


def render_text(
    results: Iterable[Result],
    outcome: Outcome,
    title: str = "",
    *,
    hide: Collection[Verdict] = (),
    expected_failures: Collection[str] = (),
) -> str:
    """One line per clause under the phase that decided it, then the root causes of what no phase
    could decide (each said once), then the clause counts and the outcome.

    `hide` leaves out lines of those verdicts (not their counts).
    """
    rolled = rolled_up(results)
    lines = [f"rlconform {HARNESS_VERSION}" + (f" - {title}" if title else ""), "=" * 72]
    phase = None
    pending_reason = ""  # said once under a run of clauses that share it
    for entry in rolled:
        if entry.verdict is Verdict.ERROR or entry.verdict in hide:
            continue
        result = entry.decisive
        said = reason(result)[:300] if entry.verdict is not Verdict.SKIP else ""
        if pending_reason and (result["phase"] != phase or said != pending_reason):
            lines.append(f"          {pending_reason}")
        if result["phase"] != phase:
            phase = result["phase"]
            lines.append(f"[{phase}]")
        flag = "  (expected failure)" if entry.clause_id in expected_failures else ""
        lines.append(f"  {MARKS[entry.verdict]}  {entry.clause_id}{flag}")
        pending_reason = said
    if pending_reason:
        lines.append(f"          {pending_reason}")
    causes = causes_of(rolled)
    if causes and Verdict.ERROR not in hide:
        lines.append("not decided, by cause:")
        for cause in causes:
            count = len(cause.clause_ids)
            lines.append(f"  ERR   {cause.reason[:300]}")
            lines.append(f"          in phase {cause.phase}: {count} clause{'s' if count != 1 else ''}")
            lines.append(f"          {_ids(cause.clause_ids)}")
    counts = verdict_counts(rolled)
    lines.append("=" * 72)
    summary = ", ".join(f"{counts[str(v)]} {v}" for v in Verdict if counts[str(v)])
    lines.append(f"{summary or 'no results'}; outcome: {outcome}")
    return "\n".join(lines)


def clause_summaries(results: Iterable[Result]) -> list[dict[str, Any]]:
    """Per clause: its rolled-up verdict, the deciding phase and every phase's verdict."""
    return [
        {
            "clause_id": entry.clause_id,
            "verdict": str(entry.verdict),
            "phase": entry.decisive["phase"],
            "reason": reason(entry.decisive),
            "phases": {str(r["phase"]): str(r["verdict"]) for r in entry.results},
        }
        for entry in rolled_up(results)
    ]


def to_json(results: Iterable[Result], outcome: Outcome, **extra: Any) -> str:
    """The clauses rolled up, their counts and root causes, and every phase's result (for evidence)."""
    results = list(results)
    rolled = rolled_up(results)
    causes = [{"reason": c.reason, "phase": c.phase, "clause_ids": c.clause_ids} for c in causes_of(rolled)]
    return json.dumps(
        {
            "harness_version": HARNESS_VERSION,
            "outcome": str(outcome),
            **extra,
            "counts": verdict_counts(rolled),
            "clauses": clause_summaries(results),
            "root_causes": causes,
            "results": results,
        },
        indent=2,
        default=str,
    )


def render_junit(
    results: Iterable[Result],
    suite_name: str,
    expected_failures: Iterable[str] = (),
) -> str:
    """JUnit XML: a testcase per clause (rolled up), in a testsuite per phase that decided it.

    fail and error become <failure>/<error>; warn, info, skip and unsupported
    become <skipped> with the verdict in the message, so CI shows them
    without failing. Expected failures are reported as skipped too.
    Characters XML forbids are written as visible escapes.
    """
    expected = set(expected_failures)
    by_phase: dict[str, list[tuple[Verdict, Result]]] = {}
    for entry in rolled_up(results):
        safe = {
            key: NOT_XML.sub(visible_escape, value) if isinstance(value, str) else value
            for key, value in entry.decisive.items()
        }
        by_phase.setdefault(str(safe["phase"]), []).append((entry.verdict, safe))
    root = ET.Element("testsuites", name=suite_name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for phase, phase_results in by_phase.items():
        element = ET.SubElement(root, "testsuite", name=f"{suite_name}.{phase}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for verdict, result in phase_results:
            case = ET.SubElement(
                element,
                "testcase",
                classname=f"{suite_name}.{phase}",
                name=result["clause_id"],
                time=f"{float(result.get('duration', 0.0)):.3f}",
            )
            counts["tests"] += 1
            message = reason(result)[:1000]
            if result["clause_id"] in expected and verdict in (Verdict.FAIL, Verdict.ERROR):
                ET.SubElement(case, "skipped", message=f"expected failure ({verdict}): {message}")
                counts["skipped"] += 1
            elif verdict is Verdict.FAIL:
                ET.SubElement(case, "failure", message=message, type=result.get("level", "MUST")).text = message
                counts["failures"] += 1
            elif verdict is Verdict.ERROR:
                ET.SubElement(case, "error", message=message).text = message
                counts["errors"] += 1
            elif verdict is not Verdict.PASS:
                ET.SubElement(case, "skipped", message=f"{verdict}: {message}")
                counts["skipped"] += 1
        for key, value in counts.items():
            element.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
