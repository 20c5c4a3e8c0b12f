"""Every suite's names fit the columns the service stores them in."""

import pytest

from app.models import ClauseResultRow, Run
from checks.registry import get_suite, kind_names


def limit(model, field):
    return next(m.max_length for m in model.model_fields[field].metadata if hasattr(m, "max_length"))


@pytest.mark.parametrize("kind", kind_names())
def test_every_suite_fits_what_the_service_stores(kind):
    """Kind, spec version, phase names and clause ids within the run and result columns."""
    suite = get_suite(kind)
    assert len(suite.kind) <= limit(Run, "kind")
    assert len(suite.spec_version) <= limit(Run, "spec_version"), suite.spec_version
    for phase in suite.phases:
        assert len(phase.name) <= limit(ClauseResultRow, "phase"), phase.name
    for clause in suite.catalogue:
        assert len(clause.id) <= limit(ClauseResultRow, "clause_id"), clause.id
