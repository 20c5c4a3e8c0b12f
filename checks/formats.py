"""A report as text for people, JSON for scripts and JUnit XML for CI."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from xml.etree import ElementTree as ET

from checks.core import HARNESS_VERSION, Outcome, Verdict
from checks.evidence import visible_escape

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


def _reason(result: Mapping[str, Any]) -> str:
    actual, expected = str(result.get("actual", "")), str(result.get("expected", ""))
    if Verdict(result["verdict"]) is Verdict.PASS:
        return actual
    if expected and actual:
        return f"expected {expected}; got {actual}"
    return actual or expected


def render_text(results: Iterable[Mapping[str, Any]], outcome: Outcome, title: str = "") -> str:
    """One line per clause and phase, in run order, then the counts and the outcome."""
    results = list(results)
    lines = [f"rlconform {HARNESS_VERSION}" + (f" - {title}" if title else ""), "=" * 72]
    phase = None
    pending_reason = ""  # said once under a run of clauses that share it
    for result in results:
        verdict = Verdict(result["verdict"])
        reason = _reason(result)[:300] if verdict is not Verdict.SKIP else ""
        if pending_reason and (result["phase"] != phase or reason != pending_reason):
            lines.append(f"          {pending_reason}")
        if result["phase"] != phase:
            phase = result["phase"]
            lines.append(f"[{phase}]")
        lines.append(f"  {MARKS[verdict]}  {result['clause_id']}")
        pending_reason = reason
    if pending_reason:
        lines.append(f"          {pending_reason}")
    counts: dict[str, int] = {}
    for result in results:
        counts[result["verdict"]] = counts.get(result["verdict"], 0) + 1
    lines.append("=" * 72)
    summary = ", ".join(f"{counts[str(v)]} {v}" for v in Verdict if counts.get(str(v)))
    lines.append(f"{summary or 'no results'}; outcome: {outcome}")
    return "\n".join(lines)


def to_json(results: Iterable[Mapping[str, Any]], outcome: Outcome, **extra: Any) -> str:
    return json.dumps(
        {"harness_version": HARNESS_VERSION, "outcome": str(outcome), **extra, "results": list(results)},
        indent=2,
        default=str,
    )


def render_junit(
    results: Iterable[Mapping[str, Any]],
    suite_name: str,
    expected_failures: Iterable[str] = (),
) -> str:
    """JUnit XML: a testsuite per phase, a testcase per clause.

    fail and error become <failure>/<error>; warn, info, skip and unsupported
    become <skipped> with the verdict in the message, so CI shows them
    without failing. Expected failures are reported as skipped too.
    Characters XML forbids are written as visible escapes.
    """
    expected = set(expected_failures)
    by_phase: dict[str, list[Mapping[str, Any]]] = {}
    for result in results:
        safe = {
            key: NOT_XML.sub(visible_escape, value) if isinstance(value, str) else value
            for key, value in result.items()
        }
        by_phase.setdefault(safe["phase"], []).append(safe)
    root = ET.Element("testsuites", name=suite_name)
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for phase, phase_results in by_phase.items():
        element = ET.SubElement(root, "testsuite", name=f"{suite_name}.{phase}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for result in phase_results:
            verdict = Verdict(result["verdict"])
            case = ET.SubElement(
                element,
                "testcase",
                classname=f"{suite_name}.{phase}",
                name=result["clause_id"],
                time=f"{float(result.get('duration', 0.0)):.3f}",
            )
            counts["tests"] += 1
            message = _reason(result)[:1000]
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
