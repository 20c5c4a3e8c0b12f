"""The reference ORS server passes every default phase, with and without its tools named: unnamed, the suite
finds them and decides every call clause."""

import pytest
from starlette.responses import JSONResponse

from checks.core import Outcome, Verdict, run_suite
from checks.ors.reference import SPLITS, TOOLS, OrsServer, serve_app, start_reference_server
from checks.ors.suite import SUITE
from tests.zoo.ors.catalogue import KEEPALIVE_OPTIONS, NAMED_TOOLS, QUICK_OPTIONS

DECIDED_BY_CALLS = (
    "ors.call.chunk-reassembly",
    "ors.call.error-event",
    "ors.call.resume",
    "ors.call.bad-input",
    "ors.finished.after-finished",
)


def verdicts(report):
    return {r.clause_id: r.verdict for r in report.results.values()}


async def test_the_reference_passes_with_the_tools_named():
    running = await start_reference_server()
    try:
        report = await run_suite(SUITE, running.url, {**QUICK_OPTIONS, **NAMED_TOOLS})
    finally:
        await running.close()
    seen = verdicts(report)
    not_passed = {cid: v for cid, v in seen.items() if v not in (Verdict.PASS, Verdict.INFO, Verdict.SKIP)}
    assert not_passed == {}
    for clause in DECIDED_BY_CALLS:
        assert seen[clause] is Verdict.PASS, clause
    assert report.outcome() is Outcome.PASS


async def test_the_reference_passes_on_defaults_with_every_call_clause_decided():
    running = await start_reference_server()
    try:
        report = await run_suite(SUITE, running.url, {"timeout": 5})
    finally:
        await running.close()
    seen = {r.clause_id: r for r in report.results.values()}
    assert report.outcome() is Outcome.PASS
    for clause in (*DECIDED_BY_CALLS, "ors.tasks.index-api-consistent", "ors.tasks.index-out-of-range"):
        assert seen[clause].verdict is Verdict.PASS, (clause, seen[clause].actual)
    assert seen["ors.session.create-session-form"].actual == "answered as sse"
    assert {r.verdict for r in report.results.values() if r.phase == "keepalive"} == {Verdict.SKIP}


async def test_the_keepalive_phase_passes_with_short_delays():
    running = await serve_app(OrsServer(idle_expiry=1.2, ping_interval=0.2))
    options = {"timeout": 5, **KEEPALIVE_OPTIONS}
    try:
        report = await run_suite(SUITE, running.url, options, ["keepalive"])
    finally:
        await running.close()
    seen = verdicts(report)
    assert {
        c: seen[c] for c in ("ors.call.keepalive", "ors.session.idle-expiry", "ors.ping.keeps-alive")
    } == dict.fromkeys(("ors.call.keepalive", "ors.session.idle-expiry", "ors.ping.keeps-alive"), Verdict.PASS)


class ToolsInASession(OrsServer):
    """The reference with no shared tools: its tools are listed only by a session's /task_tools."""

    async def tools(self, request):
        shared = not request.url.path.endswith("/task_tools")
        return JSONResponse({"tools": [] if shared else TOOLS})


class RaisingToolFirst(OrsServer):
    """The reference listing its tools last to first: the raising and the slow tool come before step."""

    async def tools(self, request):
        return JSONResponse({"tools": TOOLS[::-1]})


class IndexOnly(OrsServer):
    """The reference as an env without list_tasks: /tasks refuses, as both SDKs do, and the index API serves."""

    async def list_tasks(self, request):
        return self.refuse(400, "This environment does not support list_tasks; use the index API")


class EmptySplitFirst(OrsServer):
    """The reference declaring an empty validation split before train and test."""

    async def splits(self, request):
        return JSONResponse([{"name": "validation", "type": "validation"}, *SPLITS])

    def split_tasks(self, split):
        return [] if split == "validation" else super().split_tasks(split)


@pytest.mark.parametrize("server", [ToolsInASession, RaisingToolFirst, IndexOnly, EmptySplitFirst])
async def test_conforming_variants_pass_on_defaults_with_every_call_clause_decided(server):
    running = await serve_app(server())
    try:
        report = await run_suite(SUITE, running.url, QUICK_OPTIONS)
    finally:
        await running.close()
    seen = {r.clause_id: r for r in report.results.values()}
    assert report.outcome() is Outcome.PASS, [r.to_dict() for r in seen.values() if r.verdict is not Verdict.PASS]
    for clause in (*DECIDED_BY_CALLS, "ors.tasks.index-api-consistent", "ors.tasks.index-out-of-range"):
        assert seen[clause].verdict is Verdict.PASS, (clause, seen[clause].actual)
