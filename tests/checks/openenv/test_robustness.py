"""Whatever a target sends, the suite decides clauses instead of crashing or hanging."""

from __future__ import annotations

import time

from checks.core import Verdict
from checks.registry import get_suite
from tests.checks.openenv.envs import QUIZ_OPTIONS
from tests.checks.openenv.helpers import check, verdicts
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv import slow_reset
from tests.zoo.openenv.handmade import Quirks, build_app

# Room beyond one timeout and a second per phase: the few HTTP requests, and a loaded machine.
SLACK_SECONDS = 10.0


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
    assert set(verdicts(report, Verdict.FAIL)) == {"openenv.ws.handshake"}  # no group size declared: not judged
    errors = verdicts(report, Verdict.ERROR)
    assert {"openenv.action.rejected", "openenv.capacity.reached", "openenv.survive.hostile"} <= set(errors)
    assert all("harness error" not in seen for found in errors.values() for seen in found)
    assert "openenv.ws.handshake" in errors["openenv.action.rejected"][0]


async def test_a_reply_later_than_the_timeout_loses_its_session_and_stops_each_phase_there():
    suite = get_suite("openenv")
    options = {**QUIZ_OPTIONS, **slow_reset.OPTIONS}
    timeout = suite.parse_options(options).timeout
    assert slow_reset.RESET_DELAY > 2 * timeout  # late enough to have shifted every later frame
    with serve_in_thread(slow_reset.make_app()) as url:
        started = time.monotonic()
        report = await check(url, options)
        elapsed = time.monotonic() - started
    assert set(verdicts(report, Verdict.FAIL, Verdict.WARN)) == {"openenv.ws.reply-in-time"}
    ws_phases = [phase.name for phase in suite.phases if "openenv.ws.reply-in-time" in phase.clauses]
    for name in ws_phases:  # one missed reply per phase: each stopped at its first lost session
        missed = report.results[(name, "openenv.ws.reply-in-time")]
        if name == "attach":  # it opens /ws only on a 0.10 wire with HTTP MCP sessions, which this one is not
            assert missed.verdict is Verdict.UNSUPPORTED
            continue
        assert (missed.verdict, missed.checks) == (Verdict.FAIL, 1), name
        assert f"reset within {timeout:g}s" in missed.expected
    not_judged = [seen for found in verdicts(report, Verdict.ERROR).values() for seen in found]
    assert not_judged and all("lost its reply order after reset got no reply" in seen for seen in not_judged)
    assert report.results[("discover", "openenv.discover.health")].verdict is Verdict.PASS
    assert report.results[("http", "openenv.http.reset")].verdict is Verdict.PASS
    assert elapsed < len(suite.phases) * (timeout + 1.0) + SLACK_SECONDS


async def test_a_session_gone_silent_after_hostile_input_is_judged_by_clean_end_and_the_phase_goes_on():
    options = {**QUIZ_OPTIONS, "timeout": 1.0}
    with serve_in_thread(build_app(Quirks(mute_on_non_object=True))) as url:
        report = await check(url, options, ["survive"])
    assert verdicts(report, Verdict.FAIL, Verdict.ERROR) == {}
    clean_end = report.results[("survive", "openenv.survive.clean-end")]
    assert clean_end.verdict is Verdict.WARN
    assert "after non-object JSON" in clean_end.expected and "no reply" in clean_end.actual
    assert clean_end.checks == 3  # the deaf session, then the binary frame and JSON null were still sent
    assert report.results[("survive", "openenv.survive.hostile")].verdict is Verdict.PASS
    assert report.results[("survive", "openenv.ws.reply-in-time")].verdict is Verdict.PASS
