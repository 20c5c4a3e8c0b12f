"""Each broken OpenAI-compatible endpoint in tests/zoo is flagged with its clause, and with nothing unrelated."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tests.zoo
from checks.core import Verdict
from tests.checks.openai.helpers import check, serving, verdict_of, verdicts

ZOO = sorted(name for _, name, _ in pkgutil.iter_modules(tests.zoo.__path__) if name.startswith("openai_"))


def test_the_zoo_has_at_least_thirteen_broken_endpoints():
    assert len(ZOO) >= 13


@pytest.mark.parametrize("module", ZOO)
async def test_broken_endpoint_is_flagged_with_its_clause(module):
    entry = importlib.import_module(f"tests.zoo.{module}")
    with serving(entry.make_app()) as url:
        report = await check(url, entry.OPTIONS)
    assert verdict_of(report, entry.EXPECTED) is Verdict.FAIL, verdicts(report, Verdict.FAIL, Verdict.ERROR)
    unrelated = set(verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR)) - {entry.EXPECTED} - entry.ALSO
    assert unrelated == set(), verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    assert report.outcome() == "fail"
