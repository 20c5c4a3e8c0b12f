"""No clause that cannot fail, and none that cannot pass (issue 19).

Every MUST and SHOULD clause of every kind needs a zoo entry that makes it fail
(or warn), and a conforming server or real peer on which it is decided `pass`,
not "not judged". The fail side is the zoo catalogues (each entry's clause is
what its kind's test_zoo.py proves the suite flags). The pass side is computed
here by running every kind's conforming reference server (or, for a client kind,
its reference client against a listening run) in process, as its record's `conforming` part declares
(tests/checks/reference_runs.py drives them), and read from the real peers' tables
(tests/realpeers/verdicts.py), which their own tests hold exact.

A clause that lacks a side is listed below with the reason; an exception that is
no longer needed fails too, so the lists only shrink.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
from collections.abc import Iterable

import pytest

from checks.core import Level
from checks.registry import RECORDS, Absent, get_suite, kind_names
from tests.checks.reference_runs import TEST_ONLY_RUNS, NoConformingRuns, declared_runs, reference_runs
from tests.realpeers.verdicts import LLMOCK_ECHO, LLMOCK_VARIED, RLMESH_CARTPOLE, TRANSFORMERS_SERVE, PeerTable
from tests.zoo.entry import ZooEntry

JUDGED = (Level.MUST, Level.SHOULD)

# Clauses no zoo entry flags on its own, and why.
NO_FAILING_ENTRY: dict[str, str] = {
    "openai.determinism.repeat": "judged from the same replies as openai.determinism.declared, a MUST; the "
    "nondeterministic entry flags both (repeat as its knock-on), so no entry can flag repeat alone",
}


def judged_clauses(kind: str) -> list[str]:
    return [clause.id for clause in get_suite(kind).catalogue if clause.level in JUDGED]


def zoo_of(kind: str) -> dict[str, ZooEntry]:
    zoo: dict[str, ZooEntry] = importlib.import_module(f"tests.zoo.{kind.replace('-', '_')}.catalogue").ZOO
    return zoo


def flagged_by_zoos(zoos: Iterable[dict[str, ZooEntry]]) -> set[str]:
    """Clause ids some entry is proven to make fail or warn (its `clause`; knock-ons only may)."""
    return {entry.clause for zoo in zoos for entry in zoo.values()}


def without_failing_entry(zoos: Iterable[dict[str, ZooEntry]]) -> set[str]:
    flagged = flagged_by_zoos(zoos)
    return {clause_id for kind in kind_names() for clause_id in judged_clauses(kind) if clause_id not in flagged}


def test_every_must_and_should_has_a_zoo_entry_that_fails_it():
    missing = without_failing_entry(zoo_of(kind) for kind in kind_names())
    assert missing - NO_FAILING_ENTRY.keys() == set(), "no zoo entry flags these"
    assert NO_FAILING_ENTRY.keys() - missing == set(), "covered now: drop them from NO_FAILING_ENTRY"


def test_a_clause_that_passes_everywhere_is_caught():
    """Item 7's clause: before this round no entry made openai.stream.usage-chunk warn (its no-usage half
    was never sent a stream, so nothing could). Without the usage-unasked entry this test's rule names it."""
    zoos = [zoo_of(kind) for kind in kind_names()]
    openai = next(zoo for zoo in zoos if "usage-unasked" in zoo)
    trimmed = [{k: v for k, v in zoo.items() if k != "usage-unasked"} if zoo is openai else zoo for zoo in zoos]
    assert "openai.stream.usage-chunk" in without_failing_entry(trimmed) - NO_FAILING_ENTRY.keys()
    assert "openai.stream.usage-chunk" not in without_failing_entry(zoos)


# ---------------------------------------------------------------- the pass side


REAL_PEERS: list[PeerTable] = [TRANSFORMERS_SERVE, LLMOCK_ECHO, LLMOCK_VARIED, RLMESH_CARTPOLE]
# Clauses no conforming server or real peer decides `pass` on its own, and why.
NO_PASSING_SERVER: dict[str, str] = {}


def passes_of_table(table: PeerTable) -> set[str]:
    return {clause.id for clause in get_suite(table.kind).catalogue} - table.not_passing.keys()


async def reference_passes() -> set[str]:
    passed: set[str] = set()
    for runs in reference_runs().values():
        for run in runs:
            report = await run()
            passed |= {entry.clause_id for entry in report.rolled_up() if entry.verdict.value == "pass"}
    return passed


@pytest.fixture(scope="module")
def decided_pass() -> set[str]:
    """Clause ids decided `pass` on some conforming server run here or some real peer's table (ids are
    global: session-server runs openai-chat's clauses through its proxy)."""
    passed = asyncio.run(reference_passes())
    for table in REAL_PEERS:
        passed |= passes_of_table(table)
    return passed


@pytest.mark.parametrize("kind", kind_names())
def test_every_must_and_should_passes_on_some_conforming_server_or_real_peer(kind, decided_pass):
    missing = set(judged_clauses(kind)) - decided_pass
    assert missing - NO_PASSING_SERVER.keys() == set(), "decided pass nowhere"
    assert NO_PASSING_SERVER.keys() & missing == NO_PASSING_SERVER.keys() & set(judged_clauses(kind))


@pytest.mark.parametrize("kind", kind_names())
def test_every_kind_declares_its_conforming_runs(kind):
    declared_runs(kind)  # NoConformingRuns says which kind and what to add


def test_a_kind_without_conforming_runs_is_named(monkeypatch):
    lacking = dataclasses.replace(RECORDS["ors"], name="toy", aliases=(), conforming=Absent("not written yet"))
    monkeypatch.setitem(RECORDS, "toy", lacking)
    with pytest.raises(
        NoConformingRuns, match=r"^toy declares no conforming runs \(not written yet\): give its KindRecord"
    ):
        declared_runs("toy")
    with pytest.raises(NoConformingRuns):
        reference_runs()


def test_test_only_runs_are_of_known_kinds():
    assert TEST_ONLY_RUNS.keys() <= set(kind_names())
