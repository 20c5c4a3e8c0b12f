"""The two real ORS servers, graded with defaults: every non-pass verdict is the one docs/real-peers.md records."""

from pathlib import Path

import pytest

from checks.core import Verdict, run_suite
from checks.ors.suite import SUITE
from tests.checks.ors.peers import PEERS, needs_peers, scaffold_template, serving

pytestmark = [pytest.mark.realpeer, needs_peers]

# The faults docs/real-peers.md (## ORS) documents, with the source line that makes each one.
DOCUMENTED = {
    "openreward-template": {},
    "ors-sdk": {"ors.finished.after-finished": Verdict.WARN},
}
DOC = Path(__file__).resolve().parents[3] / "docs" / "real-peers.md"


def faults(report):
    return {
        r.clause_id: r.verdict
        for r in report.results.values()
        if r.verdict in (Verdict.FAIL, Verdict.WARN, Verdict.ERROR)
    }


async def test_openreward_template_server(tmp_path):
    template = scaffold_template(tmp_path)
    with serving(str(PEERS / "serve_template.py"), str(template)) as url:
        report = await run_suite(SUITE, url, {})
    assert faults(report) == DOCUMENTED["openreward-template"]
    passed = {r.clause_id for r in report.results.values() if r.verdict is Verdict.PASS}
    assert {"ors.call.resume", "ors.finished.after-finished", "ors.session.create-session"} <= passed


async def test_ors_sdk_env_on_defaults_finds_its_big_output_and_raising_tools():
    with serving(str(PEERS / "sdk_env.py")) as url:
        report = await run_suite(SUITE, url, {})
    assert faults(report) == DOCUMENTED["ors-sdk"]
    passed = {r.clause_id for r in report.results.values() if r.verdict is Verdict.PASS}
    assert {"ors.call.chunk-reassembly", "ors.call.error-event", "ors.call.resume", "ors.call.bad-input"} <= passed


def test_every_documented_fault_is_in_the_table():
    section = DOC.read_text().split("## ORS", 1)[1]
    for peer, clauses in DOCUMENTED.items():
        for clause, verdict in clauses.items():
            row = next((line for line in section.splitlines() if f"`{clause}`" in line and line.startswith("|")), "")
            assert f"| {verdict.value} |" in row and ".py:" in row, (peer, clause)
