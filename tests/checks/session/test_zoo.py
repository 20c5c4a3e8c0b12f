"""Every broken session server fails the run with its own clause."""

import pytest

from checks.core import Outcome, Verdict
from tests.checks.session.test_evidence import side_by_side_shown, zoo_report
from tests.zoo.session_server.catalogue import ZOO

SS_PHASES = ["health", "lifecycle", "records", "failures", "retry", "concurrency", "samples"]


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_entry_fails_its_clause(name):
    clause = ZOO[name].clause
    report = await zoo_report(name, SS_PHASES)
    failed = {r.clause_id for r in report.results.values() if r.verdict is Verdict.FAIL}
    assert clause in failed, (name, failed, [r.to_dict() for r in report.results.values() if r.clause_id == clause])
    assert report.outcome() is Outcome.FAIL
    assert side_by_side_shown(report, clause) == []
