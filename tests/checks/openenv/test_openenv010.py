"""What OpenEnv 0.10 added to the wire, judged only where the wire shows it: passes on conforming servers."""

from __future__ import annotations

from checks.core import Verdict
from checks.openenv.judging import http_metadata_problem, observation_decisions
from checks.openenv.options import OpenEnvOptions
from checks.openenv.session import decode_frame
from tests.checks.decisions import held
from tests.checks.openenv import envs
from tests.checks.openenv.helpers import check
from tests.checks.openenv.serving import serve_in_thread
from tests.zoo.openenv.handmade import Quirks, build_app


async def test_mcp_missing_name_and_input_schema_pass_on_a_conforming_mcp_endpoint():
    with serve_in_thread(build_app(Quirks(mcp="jsonrpc"))) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["mcp"])
    for clause_id in ("openenv.mcp.missing-name", "openenv.mcp.input-schema"):
        result = report.results[("mcp", clause_id)]
        assert result.verdict is Verdict.PASS, result.actual


async def test_the_task_api_is_judged_when_served_and_unsupported_when_not():
    with serve_in_thread(build_app(Quirks(tasks="consistent"))) as url:
        served = await check(url, envs.QUIZ_OPTIONS, ["tasks"])
    with serve_in_thread(build_app()) as url:
        absent = await check(url, envs.QUIZ_OPTIONS, ["tasks"])
    for clause_id in ("openenv.tasks.consistent", "openenv.tasks.reset"):
        assert served.results[("tasks", clause_id)].verdict is Verdict.PASS, served.results[("tasks", clause_id)].actual
        assert absent.results[("tasks", clause_id)].verdict is Verdict.UNSUPPORTED


async def test_the_profile_names_the_code_line_and_mode_the_wire_shows():
    with serve_in_thread(envs.quiz_app()) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["discover"])
    profile = report.results[("discover", "openenv.discover.profile")].actual
    assert profile.startswith("the wire shows openenv-core 0.3 or earlier (no 0.10 marker), simulation mode")


def test_metadata_mirrored_at_the_top_of_data_is_judged_only_when_both_are_there():
    def frame(data):
        return decode_frame('{"type": "observation", "data": ' + data + "}")

    def mirror(data):
        decisions = observation_decisions(frame(data), None, OpenEnvOptions(), on_reset=False)
        return [held(d) for d in decisions if d.clause_id == "openenv.ws.metadata-mirror"]

    both = '{"observation": {"metadata": {"a": 1}}, "reward": 0.5, "done": false, "metadata": {"a": 1}}'
    differ = '{"observation": {"metadata": {"a": 1}}, "reward": 0.5, "done": false, "metadata": {"a": 2}}'
    nested_only = '{"observation": {"metadata": {}}, "reward": 0.5, "done": false}'
    assert mirror(both) == [True]
    assert mirror(differ) == [False]
    assert mirror(nested_only) == []


async def test_http_metadata_passes_on_a_0_10_wire_and_is_not_judged_on_a_0_3_one():
    with serve_in_thread(build_app(Quirks(tasks="consistent"))) as url:
        shows_010 = await check(url, envs.QUIZ_OPTIONS, ["http"])
    with serve_in_thread(build_app()) as url:
        shows_03 = await check(url, envs.QUIZ_OPTIONS, ["http"])
    assert shows_010.results[("http", "openenv.http.metadata")].verdict is Verdict.PASS
    result = shows_03.results[("http", "openenv.http.metadata")]
    assert result.verdict is Verdict.INFO
    assert result.actual.startswith("not judged")


def test_http_metadata_is_null_when_empty_and_the_observation_s_metadata_otherwise():
    def body(nested, **top):
        return {"observation": {"metadata": nested}, "reward": 0.0, "done": False, **top}

    assert http_metadata_problem(body({}, metadata=None)) is None
    assert http_metadata_problem(body({"step": 1}, metadata={"step": 1})) is None
    assert http_metadata_problem(body({})) == "no top-level metadata key"
    assert "differs" in (http_metadata_problem(body({"step": 1}, metadata={"step": 2})) or "")
    assert "null while" in (http_metadata_problem(body({"step": 1}, metadata=None)) or "")
    assert "neither null" in (http_metadata_problem(body({}, metadata=[])) or "")


async def test_attach_is_not_judged_on_a_wire_without_0_10_markers():
    with serve_in_thread(build_app(Quirks(mcp="jsonrpc"))) as url:
        report = await check(url, envs.QUIZ_OPTIONS, ["attach"])
    for clause_id in ("openenv.attach.session", "openenv.attach.unknown-id"):
        assert report.results[("attach", clause_id)].verdict is Verdict.UNSUPPORTED


async def test_production_mode_is_read_from_openapi_and_judged_only_there():
    with serve_in_thread(build_app(Quirks(production="hidden"))) as url:
        production = await check(url, envs.QUIZ_OPTIONS, ["production"])
    with serve_in_thread(build_app()) as url:
        simulation = await check(url, envs.QUIZ_OPTIONS, ["production"])
    for report in (production, simulation):
        harness = report.results[("production", "openenv.production.harness")]
        assert harness.verdict is Verdict.PASS, harness.actual
        assert "HTTP 403" in harness.actual
    absent = production.results[("production", "openenv.production.http-absent")]
    assert absent.verdict is Verdict.PASS, absent.actual
    episodes = production.results[("production", "openenv.production.ws-episodes")]
    assert episodes.verdict is Verdict.INFO and "reset -> observation" in episodes.actual, episodes.actual
    for clause_id in ("openenv.production.http-absent", "openenv.production.ws-episodes"):
        assert simulation.results[("production", clause_id)].verdict is Verdict.UNSUPPORTED
