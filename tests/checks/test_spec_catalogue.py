"""SPEC.md and every suite's catalogue name the same clauses, levels and statements."""

import pytest

from checks.core import Catalogue
from checks.registry import get_suite, kind_names
from checks.spec import load_aliases, load_spec, parse_aliases
from checks.tap.kinds import TAP_KINDS, tap_spec


@pytest.fixture(scope="module")
def spec():
    return load_spec()


@pytest.mark.parametrize("kind", kind_names())
def test_every_clause_is_in_spec_with_the_same_level_and_statement(kind, spec):
    suite = get_suite(kind)
    assert len(suite.catalogue) > 0
    for clause in suite.catalogue:
        assert clause.id in spec, f"{clause.id} is reported by {kind} but missing from SPEC.md"
        assert spec[clause.id].level == clause.level, clause.id
        assert spec[clause.id].statement == clause.statement, clause.id


@pytest.mark.parametrize("kind", kind_names())
def test_every_phase_clause_is_catalogued(kind):
    suite = get_suite(kind)
    for phase in suite.phases:
        for clause_id in phase.clauses:
            assert clause_id in suite.catalogue, f"{phase.name} lists unknown {clause_id}"


def test_spec_has_no_clause_that_no_suite_reports(spec):
    reported = {clause.id for kind in kind_names() for clause in get_suite(kind).catalogue}
    reported |= {clause.id for kind in TAP_KINDS for clause in tap_spec(kind, {}).catalogue}  # tap-only clauses
    assert set(spec) - reported == set()


def test_aliases_in_spec_match_the_catalogues():
    declared = {old: new for kind in kind_names() for old, new in get_suite(kind).catalogue.aliases.items()}
    assert load_aliases() == declared


def test_alias_lines_parse_and_resolve():
    text = "- alias `toy.1.old` → `toy.1.new`: the clause was split\n- **MUST** `toy.1.new`: New."
    assert parse_aliases(text) == {"toy.1.old": "toy.1.new"}
    catalogue = Catalogue()
    catalogue.must("toy.1.new", "New.")
    catalogue.alias("toy.1.old", "toy.1.new")
    assert catalogue.resolve("toy.1.old") == "toy.1.new"
    assert catalogue.knows("toy.1.old") and "toy.1.old" not in catalogue
    with pytest.raises(ValueError):
        catalogue.alias("toy.1.other", "toy.1.missing")
