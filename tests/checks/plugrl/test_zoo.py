"""Every broken server in the zoo is flagged with its clause, and with nothing unrelated.

Each server runs in-process on the test's event loop (127.0.0.1, a port
from the OS) and is closed whatever the test does. False positives count as
much as misses: apart from the expected clause, only the knock-on clauses
its entry names may fail, and only entries whose fault stops phases early
may leave clauses `error`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from checks.core import MISSED_VERDICT, Gate, Level, Outcome, Report, Verdict, run_suite, worst
from checks.plugrl.suite import SUITE
from tests.zoo.plugrl_server.catalogue import ZOO, PlugRLServerEntry
from tests.zoo.plugrl_server.core import running

# Short deadlines: a zoo server answers in milliseconds unless its fault is silence.
ZOO_OPTIONS: dict[str, Any] = {"timeout": 2.0, "patience": 0.3}
CLI_TIMEOUT = 60.0
REPO_ROOT = Path(__file__).resolve().parents[3]


async def check_zoo_server(entry: PlugRLServerEntry, url: str) -> Report:
    phases = list(entry.phases) if entry.phases else None
    return await run_suite(SUITE, url, {**ZOO_OPTIONS, **entry.options}, phases)


def verdicts_by_clause(report: Report) -> dict[str, Verdict]:
    """Each clause's worst verdict over every phase that decided it."""
    collected: dict[str, list[Verdict]] = {}
    for result in report.results.values():
        collected.setdefault(result.clause_id, []).append(result.verdict)
    return {clause_id: worst(verdicts) for clause_id, verdicts in collected.items()}


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
        unknown = set(entry.knock_on) - {c.id for c in SUITE.catalogue}
        assert not unknown, f"{name}: knock-on clauses {unknown} are not in the suite"
        assert entry.clause not in entry.knock_on, name
        assert set(entry.phases or ()) <= phase_names, name
        SUITE.parse_options({**ZOO_OPTIONS, **entry.options})  # raises on an unknown or bad option


def test_the_zoo_holds_distinct_faults():
    assert len(ZOO) >= 24
    assert len({entry.start for entry in ZOO.values()}) == len(ZOO)


def test_every_must_and_should_clause_is_proved_detectable_by_some_entry():
    flagged = {entry.clause for entry in ZOO.values()}
    unproved = [c.id for c in SUITE.catalogue if c.level is not Level.INFO and c.id not in flagged]
    assert not unproved, f"no zoo server breaks {unproved}: add one, so the suite is shown to catch it"


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_server_is_flagged_with_its_clause_only(name: str):
    entry = ZOO[name]
    async with running(entry.start, **entry.server_options) as server:
        report = await check_zoo_server(entry, server.url)
    verdicts = verdicts_by_clause(report)
    level = SUITE.catalogue[entry.clause].level
    missed = MISSED_VERDICT[level]

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
    "env-major": ["--phase", "exchange"],
    "lenient": ["--phase", "errors"],
    "wrong-stop-reason": ["--phase", "stop", "--until-stop"],
}


async def cli_check(url: str, *args: str) -> tuple[int | None, str, str]:
    """`rlconform check plugrl-server URL ARGS` with the quick options: (exit code, stdout, stderr)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "check",
        "plugrl-server",
        url,
        *args,
        "--timeout",
        str(ZOO_OPTIONS["timeout"]),
        "--option",
        f"patience={ZOO_OPTIONS['patience']}",
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
    return process.returncode, stdout.decode(), stderr.decode()


@pytest.mark.parametrize("name", list(CLI_CASES))
async def test_cli_exits_1_and_names_the_clause(name: str):
    entry = ZOO[name]
    async with running(entry.start, **entry.server_options) as server:
        code, output, errors = await cli_check(server.url, *CLI_CASES[name])
    assert code == 1, f"exit {code}\n{output}\n{errors}"
    assert entry.clause in output
    failed_lines = [line for line in output.splitlines() if line.strip().startswith("FAIL")]
    assert any(entry.clause in line for line in failed_lines), output
