"""Whatever a target sends, the suite decides clauses instead of crashing or hanging."""

from __future__ import annotations

from checks.core import Verdict
from tests.checks.openenv.envs import QUIZ_OPTIONS
from tests.checks.openenv.helpers import check, verdicts
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv_handmade import Quirks, build_app


async def test_json_nested_too_deep_to_decode_is_judged_not_json():
    too_deep = '{"name": ' + "[" * 100_000 + "]" * 100_000 + ', "description": "d"}'
    with serve_in_thread(build_app(Quirks(metadata_body=too_deep))) as url:
        report = await check(url, QUIZ_OPTIONS, ["discover"])
    assert verdicts(report, Verdict.ERROR) == {}
    metadata = report.results[("discover", "openenv.discover.metadata")]
    assert metadata.verdict is Verdict.FAIL
    assert "200" in metadata.actual


async def test_a_body_that_never_ends_costs_one_timeout_not_the_phase():
    with serve_in_thread(build_app(Quirks(slow_metadata=True))) as url:
        report = await check(url, {**QUIZ_OPTIONS, "timeout": 1.0}, ["discover"])
    assert verdicts(report, Verdict.ERROR) == {}
    assert set(verdicts(report, Verdict.FAIL)) == {"openenv.discover.metadata"}
    assert "longer than 1s" in report.results[("discover", "openenv.discover.metadata")].actual
    assert report.results[("discover", "openenv.discover.schema")].verdict is Verdict.PASS


async def test_without_a_session_endpoint_the_session_clauses_are_errors_pointing_at_the_handshake():
    with serve_in_thread(build_app(Quirks(ws_path="/env/ws"))) as url:
        report = await check(url, QUIZ_OPTIONS, ["session", "actions", "capacity", "survive"])
    assert set(verdicts(report, Verdict.FAIL)) == {"openenv.ws.handshake", "openenv.capacity.group"}
    errors = verdicts(report, Verdict.ERROR)
    assert {"openenv.action.rejected", "openenv.capacity.reached", "openenv.survive.hostile"} <= set(errors)
    assert all("harness error" not in seen for found in errors.values() for seen in found)
    assert "openenv.ws.handshake" in errors["openenv.action.rejected"][0]
