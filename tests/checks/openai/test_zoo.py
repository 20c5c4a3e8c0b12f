"""Each broken OpenAI-compatible endpoint in tests/zoo is flagged with its clause, and with nothing unrelated."""

from __future__ import annotations

import pytest

from checks.core import Verdict
from tests.checks.openai.helpers import check, serving, verdict_of, verdicts
from tests.zoo.openai_chat.catalogue import ZOO


def test_the_zoo_has_at_least_thirteen_broken_endpoints():
    assert len(ZOO) >= 13


@pytest.mark.parametrize("name", list(ZOO))
async def test_broken_endpoint_is_flagged_with_its_clause(name):
    entry = ZOO[name]
    with serving(entry.start()) as url:
        report = await check(url, entry.options)
    assert verdict_of(report, entry.clause) is entry.verdict, verdicts(report, Verdict.FAIL, Verdict.ERROR)
    flagged = (Verdict.FAIL, Verdict.WARN) if entry.may_error else (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    unrelated = set(verdicts(report, *flagged)) - {entry.clause} - entry.knock_on
    assert unrelated == set(), verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    assert report.outcome() == ("fail" if entry.verdict is Verdict.FAIL else "pass")
