"""Every broken ORS server is flagged with its own clause, and with nothing unrelated."""

import pytest

from checks.core import Verdict, run_suite
from checks.ors.suite import SUITE
from checks.verdicts import Level
from tests.zoo.ors.catalogue import ZOO, start

MISSED = {Verdict.FAIL, Verdict.WARN}


def test_the_zoo_is_big_enough_and_fails_every_must_and_should():
    assert len(ZOO) >= 20
    graded = {clause.id for clause in SUITE.catalogue if clause.level is not Level.INFO}
    assert graded - {entry.clause for entry in ZOO.values()} == set()


@pytest.mark.parametrize("name", list(ZOO))
async def test_zoo_entry_is_flagged_with_its_clause_only(name):
    entry = ZOO[name]
    running = await start(name)
    try:
        report = await run_suite(SUITE, running.url, entry.options, entry.phases)
    finally:
        await running.close()
    missed = {r.clause_id for r in report.results.values() if r.verdict in MISSED}
    errors = {r.clause_id: r.actual for r in report.results.values() if r.verdict is Verdict.ERROR}
    assert entry.clause in missed, (
        name,
        missed,
        [r.to_dict() for r in report.results.values() if r.clause_id == entry.clause],
    )
    assert missed - {entry.clause} - entry.knock_on == set(), (name, missed)
    assert errors == {}, (name, errors)
