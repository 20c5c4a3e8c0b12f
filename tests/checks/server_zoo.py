"""What the server kinds' zoo tests share (plugrl-server, rllink): each broken server is flagged with its
clause and nothing unrelated, the zoo covers every MUST and SHOULD, and the real CLI exits 1 naming the clause.

An entry is any zoo record with `clause`, `knock_on`, `phases`, `options` and `may_error`.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks.core import MISSED_VERDICT, Gate, Level, Outcome, Report, Suite, Verdict, worst

CLI_TIMEOUT = 60.0
REPO_ROOT = Path(__file__).resolve().parents[2]


def verdicts_by_clause(report: Report) -> dict[str, Verdict]:
    """Each clause's worst verdict over every phase that decided it."""
    collected: dict[str, list[Verdict]] = {}
    for result in report.results.values():
        collected.setdefault(result.clause_id, []).append(result.verdict)
    return {clause_id: verdict for clause_id, verdicts in collected.items() if (verdict := worst(verdicts))}


def describe(report: Report, clause_ids: set[str]) -> str:
    return "\n".join(
        f"{r.phase}: {r.clause_id} {r.verdict}: {r.expected} / {r.actual}"
        for r in report.results.values()
        if r.clause_id in clause_ids and r.verdict not in (Verdict.PASS, Verdict.SKIP)
    )


def assert_entries_name_catalogued_clauses_and_phases(suite: Suite, zoo: Mapping[str, Any], options: dict) -> None:
    phase_names = {phase.name for phase in suite.phases}
    for name, entry in zoo.items():
        assert entry.clause in suite.catalogue, f"{name}: {entry.clause} is not a clause of the suite"
        unknown = set(entry.knock_on) - {c.id for c in suite.catalogue}
        assert not unknown, f"{name}: knock-on clauses {unknown} are not in the suite"
        assert entry.clause not in entry.knock_on, name
        assert set(entry.phases or ()) <= phase_names, name
        suite.parse_options({**options, **entry.options})  # raises on an unknown or bad option


def assert_every_must_and_should_is_proved(suite: Suite, zoo: Mapping[str, Any]) -> None:
    flagged = {entry.clause for entry in zoo.values()}
    unproved = [c.id for c in suite.catalogue if c.level is not Level.INFO and c.id not in flagged]
    assert not unproved, f"no zoo server breaks {unproved}: add one, so the suite is shown to catch it"


def assert_flagged_with_its_clause_only(suite: Suite, name: str, entry: Any, report: Report) -> None:
    """The entry's clause gets the verdict a miss at its level gets; nothing else fails but its knock-ons, and
    nothing is left `error` unless the entry says its fault may stop phases early."""
    verdicts = verdicts_by_clause(report)
    missed = MISSED_VERDICT[suite.catalogue[entry.clause].level]

    assert verdicts.get(entry.clause) is missed, (
        f"{name} should get {missed} on {entry.clause}, got {verdicts.get(entry.clause)}\n"
        + describe(report, set(verdicts))
    )
    assert report.outcome(Gate.STRICT) is Outcome.FAIL
    if missed is Verdict.FAIL:
        assert report.outcome() is Outcome.FAIL

    failing = {c for c, v in verdicts.items() if v in (Verdict.FAIL, Verdict.WARN)}
    unrelated = failing - {entry.clause} - entry.knock_on
    assert not unrelated, f"{name} also fails unrelated clauses:\n{describe(report, unrelated)}"
    errored = {c for c, v in verdicts.items() if v is Verdict.ERROR}
    assert entry.may_error or not errored, f"{name} left clauses undecided:\n{describe(report, errored)}"


async def cli_check(kind: str, url: str, *args: str) -> tuple[int | None, str, str]:
    """`rlconform check KIND URL ARGS --quiet`: (exit code, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "app.cli", "check", kind, url, *args, "--quiet"),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), CLI_TIMEOUT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return process.returncode, stdout.decode(), stderr.decode()


def assert_cli_failed_on(clause: str, code: int | None, output: str, errors: str) -> None:
    """Exit 1, and a FAIL line of the output names `clause`."""
    assert code == 1, f"exit {code}\n{output}\n{errors}"
    failed_lines = [line for line in output.splitlines() if line.strip().startswith("FAIL")]
    assert any(clause in line for line in failed_lines), output
