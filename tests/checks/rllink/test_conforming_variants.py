"""Conforming RLlink servers that differ where the protocol lets them pass: no fail and no error.

`tests/zoo/rllink/variants.py` holds them. RLlib's stale-state race is the one
that may warn: a repeated weights_seq_no breaks the SHOULD-level strict +1
sequence, never the MUST that it does not decrease, so the default gate passes
and only the strict gate fails.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.core import Gate, Outcome, Verdict, run_suite
from checks.rllink.codec import Dialect
from checks.rllink.reference import ReferenceServer
from checks.rllink.suite import SUITE
from tests.zoo.rllink.catalogue import ZOO_OPTIONS, running
from tests.zoo.rllink.variants import NonAsciiJson, SlowTrainer, StaleStateRace, StrictHeader

VARIANT_OPTIONS: dict[str, Any] = {**ZOO_OPTIONS, "batches": 3}

CLEAN = {
    "strict-header-msgpack": (StrictHeader, "msgpack"),
    "strict-header-json": (StrictHeader, "json"),
    "non-ascii-json": (NonAsciiJson, "json"),
    "slow-trainer": (SlowTrainer, "msgpack"),
}


def verdicts(report: Any, clause_id: str) -> set[Verdict]:
    return {r.verdict for r in report.results.values() if r.clause_id == clause_id}


def not_clean(report: Any, allowed: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    return [
        (r.clause_id, r.verdict, r.actual)
        for r in report.results.values()
        if r.verdict not in (Verdict.PASS, Verdict.INFO, Verdict.SKIP) and r.clause_id not in allowed
    ]


@pytest.mark.parametrize("name", list(CLEAN))
async def test_variant_passes_every_phase(name: str):
    factory, dialect = CLEAN[name]
    async with running(factory, dialect) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, include_optional=True)
    assert not not_clean(report)
    assert report.outcome(Gate.STRICT) is Outcome.PASS


async def test_strict_header_refusing_lenient_headers_is_only_informational():
    async with running(StrictHeader, "msgpack") as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS, ["handshake", "tolerance"])
    lenient = [r.actual for r in report.results.values() if r.clause_id == "rllink.header.lenient"]
    assert lenient and "refused" in lenient[0] and "accepted" not in lenient[0], lenient
    assert verdicts(report, "rllink.header.lenient") == {Verdict.INFO}


@pytest.mark.parametrize("dialect", ["msgpack", "json"])
async def test_stale_state_race_warns_on_strict_only_and_passes_the_default_gate(dialect: Dialect):
    factory: type[ReferenceServer] = StaleStateRace
    async with running(factory, dialect) as server:
        report = await run_suite(SUITE, server.url, VARIANT_OPTIONS)
    assert verdicts(report, "rllink.seq.strict") == {Verdict.WARN}
    assert verdicts(report, "rllink.seq.monotonic") == {Verdict.PASS}
    assert not not_clean(report, allowed=("rllink.seq.strict",))
    assert report.outcome() is Outcome.PASS
    assert report.outcome(Gate.STRICT) is Outcome.FAIL
