"""Every clause a tap reports is in SPEC.md with the same level and statement, and every kind's tap splits its
catalogue into clauses the traffic decides and clauses that need an active run."""

import pytest

from checks.spec import load_spec
from checks.tap.kinds import TAP_KINDS, tap_spec


@pytest.mark.parametrize("kind", sorted(TAP_KINDS))
def test_tap_clauses_are_in_spec(kind):
    spec = load_spec()
    for clause in tap_spec(kind, {}).catalogue:
        assert clause.id in spec, clause.id
        assert (spec[clause.id].level, spec[clause.id].statement) == (clause.level, clause.statement), clause.id


@pytest.mark.parametrize("kind", sorted(TAP_KINDS))
def test_some_clauses_are_passive_and_some_need_an_active_run(kind):
    tap = tap_spec(kind, {})
    ids = {clause.id for clause in tap.catalogue}
    assert tap.active_only < ids
    assert len(ids - tap.active_only) >= 6


def test_miles_session_raises_the_fidelity_clauses_to_must():
    assert tap_spec("openai", {"preset": "miles-session"}).raised >= {"tap.openai.token-ids-extend"}
    assert tap_spec("openai", {}).raised == frozenset()
    with pytest.raises(ValueError, match="preset"):
        tap_spec("openai", {"preset": "nope"})
    with pytest.raises(ValueError, match="no tap"):
        tap_spec("rlmesh", {})
