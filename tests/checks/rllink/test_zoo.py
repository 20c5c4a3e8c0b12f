"""Every broken RLlink server in the zoo is flagged with its clause, and with nothing unrelated.

Each server runs in-process on the test's event loop (127.0.0.1, a port from
the OS) and is closed whatever the test does. False positives count as much
as misses: apart from the expected clause, only the knock-on clauses its entry
names may fail or warn, and only entries whose fault stops phases early may
leave clauses `error`.
"""

from __future__ import annotations

import pytest

from checks.core import Report, run_suite
from checks.rllink.suite import SUITE
from tests.checks.server_zoo import (
    assert_cli_failed_on,
    assert_entries_name_catalogued_clauses_and_phases,
    assert_every_must_and_should_is_proved,
    assert_flagged_with_its_clause_only,
    cli_check,
)
from tests.zoo.rllink.catalogue import ZOO, ZOO_OPTIONS, RLlinkServerEntry, running


async def check_zoo_server(entry: RLlinkServerEntry, url: str) -> Report:
    phases = list(entry.phases) if entry.phases else None
    return await run_suite(SUITE, url, {**ZOO_OPTIONS, **entry.options}, phases, include_optional=entry.until_stop)


def test_every_entry_names_catalogued_clauses_and_phases():
    assert_entries_name_catalogued_clauses_and_phases(SUITE, ZOO, ZOO_OPTIONS)


def test_the_zoo_holds_distinct_faults_in_both_dialects():
    assert len(ZOO) >= 20
    assert len({entry.start for entry in ZOO.values()}) == len(ZOO)
    assert {entry.dialect for entry in ZOO.values()} == {"json", "msgpack"}


def test_every_must_and_should_clause_is_proved_detectable_by_some_entry():
    assert_every_must_and_should_is_proved(SUITE, ZOO)


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_server_is_flagged_with_its_clause_only(name: str):
    entry = ZOO[name]
    async with running(entry.start, entry.dialect) as server:
        report = await check_zoo_server(entry, server.url)
    assert_flagged_with_its_clause_only(SUITE, name, entry, report)


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
        result = await cli_check(
            "rllink", server.url, *CLI_CASES[name], "--timeout", str(ZOO_OPTIONS["timeout"]), *options
        )
    assert_cli_failed_on(entry.clause, *result)
