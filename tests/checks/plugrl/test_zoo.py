"""Every broken server in the zoo is flagged with its clause, and with nothing unrelated.

Each server runs in-process on the test's event loop (127.0.0.1, a port
from the OS) and is closed whatever the test does. False positives count as
much as misses: apart from the expected clause, only the knock-on clauses
its entry names may fail, and only entries whose fault stops phases early
may leave clauses `error`.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.core import Report, run_suite
from checks.plugrl.suite import SUITE
from tests.checks.server_zoo import (
    assert_cli_failed_on,
    assert_entries_name_catalogued_clauses_and_phases,
    assert_every_must_and_should_is_proved,
    assert_flagged_with_its_clause_only,
    cli_check,
)
from tests.zoo.plugrl_server.catalogue import ZOO, PlugRLServerEntry
from tests.zoo.plugrl_server.core import running

# Short deadlines: a zoo server answers in milliseconds unless its fault is silence.
ZOO_OPTIONS: dict[str, Any] = {"timeout": 2.0, "patience": 0.3}
# The same options as `rlconform check` flags.
QUICK_CLI_ARGS = ("--timeout", str(ZOO_OPTIONS["timeout"]), "--option", f"patience={ZOO_OPTIONS['patience']}")


async def check_zoo_server(entry: PlugRLServerEntry, url: str) -> Report:
    phases = list(entry.phases) if entry.phases else None
    return await run_suite(SUITE, url, {**ZOO_OPTIONS, **entry.options}, phases)


def test_every_entry_names_catalogued_clauses_and_phases():
    assert_entries_name_catalogued_clauses_and_phases(SUITE, ZOO, ZOO_OPTIONS)


def test_the_zoo_holds_distinct_faults():
    assert len(ZOO) >= 24
    assert len({entry.start for entry in ZOO.values()}) == len(ZOO)


def test_every_must_and_should_clause_is_proved_detectable_by_some_entry():
    assert_every_must_and_should_is_proved(SUITE, ZOO)


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_server_is_flagged_with_its_clause_only(name: str):
    entry = ZOO[name]
    async with running(entry.start, **entry.server_options) as server:
        report = await check_zoo_server(entry, server.url)
    assert_flagged_with_its_clause_only(SUITE, name, entry, report)


# ---------------------------------------------------------------- through the real CLI

CLI_CASES = {
    "env-major": ["--phase", "exchange"],
    "lenient": ["--phase", "errors"],
    "wrong-stop-reason": ["--phase", "stop", "--until-stop"],
}


@pytest.mark.parametrize("name", list(CLI_CASES))
async def test_cli_exits_1_and_names_the_clause(name: str):
    entry = ZOO[name]
    async with running(entry.start, **entry.server_options) as server:
        result = await cli_check("plugrl-server", server.url, *CLI_CASES[name], *QUICK_CLI_ARGS)
    assert_cli_failed_on(entry.clause, *result)
