"""SPEC.md and every suite's catalogue name the same clauses, levels and statements."""

import pytest

from checks.registry import KINDS, get_suite
from checks.spec import load_spec


@pytest.fixture(scope="module")
def spec():
    return load_spec()


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_clause_is_in_spec_with_the_same_level_and_statement(kind, spec):
    suite = get_suite(kind)
    assert len(suite.catalogue) > 0
    for clause in suite.catalogue:
        assert clause.id in spec, f"{clause.id} is reported by {kind} but missing from SPEC.md"
        assert spec[clause.id].level == clause.level, clause.id
        assert spec[clause.id].statement == clause.statement, clause.id


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_phase_clause_is_catalogued(kind):
    suite = get_suite(kind)
    for phase in suite.phases:
        for clause_id in phase.clauses:
            assert clause_id in suite.catalogue, f"{phase.name} lists unknown {clause_id}"


def test_spec_has_no_clause_that_no_suite_reports(spec):
    reported = {clause.id for kind in KINDS for clause in get_suite(kind).catalogue}
    assert set(spec) - reported == set()
