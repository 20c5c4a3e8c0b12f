"""Every broken RLlink server in the zoo is flagged with its clause, and with nothing unrelated.

Each server runs in-process on the test's event loop (127.0.0.1, a port from
the OS) and is closed whatever the test does. False positives count as much
as misses: apart from the expected clause, only the knock-on clauses its entry
names may fail or warn, and only entries whose fault stops phases early may
leave clauses `error`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from checks.core import MISSED_VERDICT, Gate, Level, Outcome, Report, Verdict, run_suite, worst
from checks.rllink.suite import SUITE
from tests.zoo.rllink.catalogue import ZOO, ZOO_OPTIONS, RLlinkServerEntry, running

CLI_TIMEOUT = 60.0
REPO_ROOT = Path(__file__).resolve().parents[3]


async def check_zoo_server(entry: RLlinkServerEntry, url: str) -> Report:
    phases = list(entry.phases) if entry.phases else None
    return await run_suite(SUITE, url, {**ZOO_OPTIONS, **entry.options}, phases, include_optional=entry.until_stop)


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


def test_every_entry_names_catalogued_clauses_and_phases():
    phase_names = {phase.name for phase in SUITE.phases}
    for name, entry in ZOO.items():
        assert entry.clause in SUITE.catalogue, f"{name}: {entry.clause} is not a clause of the suite"
        assert set(entry.knock_on) <= {c.id for c in SUITE.catalogue}, name
        assert entry.clause not in entry.knock_on, name
        assert set(entry.phases or ()) <= phase_names, name
        SUITE.parse_options({**ZOO_OPTIONS, **entry.options})


def test_the_zoo_holds_distinct_faults_in_both_dialects():
    assert len(ZOO) >= 20
    assert len({entry.start for entry in ZOO.values()}) == len(ZOO)
    assert {entry.dialect for entry in ZOO.values()} == {"json", "msgpack"}


def test_every_must_and_should_clause_is_proved_detectable_by_some_entry():
    flagged = {entry.clause for entry in ZOO.values()}
    unproved = [c.id for c in SUITE.catalogue if c.level is not Level.INFO and c.id not in flagged]
    assert not unproved, f"no zoo server breaks {unproved}: add one, so the suite is shown to catch it"


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_server_is_flagged_with_its_clause_only(name: str):
    entry = ZOO[name]
    async with running(entry.start, entry.dialect) as server:
        report = await check_zoo_server(entry, server.url)
    verdicts = verdicts_by_clause(report)
    missed = MISSED_VERDICT[SUITE.catalogue[entry.clause].level]

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


# ---------------------------------------------------------------- through the real CLI

CLI_CASES = {
    "onnx-wrong-logits": ["--phase", "handshake"],
    "counts-down": ["--phase", "handshake", "--phase", "batches"],
}


@pytest.mark.parametrize("name", list(CLI_CASES))
async def test_cli_exits_1_and_names_the_clause(name: str):
    entry = ZOO[name]
    options = [arg for key, value in ZOO_OPTIONS.items() if key != "timeout" for arg in ("--option", f"{key}={value}")]
    async with running(entry.start, entry.dialect) as server:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "app.cli",
            "check",
            "rllink",
            server.url,
            *CLI_CASES[name],
            "--timeout",
            str(ZOO_OPTIONS["timeout"]),
            *options,
            "--quiet",
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
    output = stdout.decode()
    assert process.returncode == 1, f"exit {process.returncode}\n{output}\n{stderr.decode()}"
    failed_lines = [line for line in output.splitlines() if line.strip().startswith("FAIL")]
    assert any(entry.clause in line for line in failed_lines), output
