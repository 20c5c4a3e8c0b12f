"""Issue 30 item 3: every openai-chat clause judged on its own evidence.

A refused request (4xx JSON) says nothing about streaming or tool-call shape, a reply cut at
max_tokens is no tool-shape fault, a reply without a call says nothing about a cut call, every
4xx body met is held to the error shape, and a failed clause does not keep the clauses after it
from their own evidence. Judges on recorded replies first, then the phases against live servers.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import JSONResponse, StreamingResponse

from checks.core import Verdict
from checks.http_client import StreamReply
from checks.openai import judging, judging_tools
from checks.openai.reference import Completion, ReferenceModel, Refusal, make_app
from checks.openai.requests import TOOLS
from checks.openai.shapes import error_shape_problem
from tests.checks.decisions import held
from tests.checks.openai.helpers import check, serving, verdicts
from tests.checks.openai.test_judging import chunk, completion, reply, stream_of, tool_reply

OPENAI_ERROR: dict[str, Any] = {
    "error": {"message": "tools need the auto tool choice flags", "type": "BadRequestError", "param": None, "code": 400}
}


def refused(status: int = 400) -> Any:
    return reply(OPENAI_ERROR, status=status)


def refused_stream(status: int = 400) -> StreamReply:
    return StreamReply(status, "application/json", error_reply=refused(status))


def test_a_stream_refused_like_its_json_twin_is_no_stream_evidence():
    decision = judging.stream_format(refused_stream(), "a tool call", twin=refused())
    assert held(decision) is None and "not judged: the request was refused (400" in decision.actual
    assert held(judging.usage_chunk(refused_stream(), asked=True)) is None
    equivalent = judging.stream_equivalent(refused(), refused_stream(), refused(), "a tool call")
    assert held(equivalent) is None and "refused" in equivalent.actual


def test_a_stream_refused_while_its_json_twin_is_answered_is_a_stream_fault():
    decision = judging.stream_format(refused_stream(), "a text reply", twin=reply(completion()))
    assert held(decision) is False and "though answered 200 without stream" in decision.actual
    assert held(judging.stream_format(StreamReply(500, "text/plain"), "a text reply", twin=refused())) is False


def test_a_call_cut_at_max_tokens_is_no_tool_shape_fault():
    cut = tool_reply('{"ci', finish="length")
    shape = judging_tools.tool_call_shape(cut, TOOLS)
    assert held(shape) is None and shape.actual.startswith("not judged: cut at max_tokens")
    assert held(judging_tools.tool_call_shape(cut, TOOLS, parallel=True)) is None
    parallel = judging_tools.parallel_calls(cut)
    assert held(parallel) is None and parallel.actual.startswith("not judged: cut at max_tokens")
    text_cut = reply(completion("<tool_call>"))
    text_cut.body["choices"][0]["finish_reason"] = "length"
    assert held(judging_tools.tool_call_shape(text_cut, TOOLS)) is None
    # Not cut: still judged.
    assert held(judging_tools.tool_call_shape(reply(completion("no call")), TOOLS)) is False


def test_a_refused_tool_request_is_no_tool_shape_evidence_but_its_body_is_judged():
    for decision in (judging_tools.tool_call_shape(refused(), TOOLS), judging_tools.parallel_calls(refused())):
        assert held(decision) is None and "refused" in decision.actual
    shapes = judging.refusal_shape(reply({"detail": "Not Found"}, status=404), "a tool request", "openai")
    assert [(d.clause_id, held(d)) for d in shapes] == [("openai.errors.shape", False)]
    assert judging.refusal_shape(reply(completion()), "a tool request", "openai") == []
    assert held(judging_tools.tool_call_shape(reply({}, status=500), TOOLS)) is False


def test_a_truncated_call_is_not_judged_where_no_call_was_made():
    for no_call in (refused(), refused(422), reply(completion("It is sunny."))):
        decision = judging_tools.truncated_call(no_call)
        assert held(decision) is None and decision.actual.startswith("not judged"), decision
    cut_text = reply(completion("<tool"))
    cut_text.body["choices"][0]["finish_reason"] = "length"
    assert held(judging_tools.truncated_call(cut_text)) is None
    assert held(judging_tools.truncated_call(cut_text, called=True))
    assert held(judging_tools.truncated_call(reply({}, status=500))) is False


def test_error_bodies_that_are_not_the_openai_object_are_named():
    assert error_shape_problem({"error": "Unauthorized"}, "openai").startswith("the body is not")
    none_type = {"error": {"message": "m", "type": "None", "param": "None", "code": "401"}}
    assert "names no kind of error" in error_shape_problem(none_type, "openai")
    assert error_shape_problem({"detail": [{"msg": "field required"}]}, "openai").startswith("the body is not")


def test_an_auth_refusal_is_held_to_the_error_shape():
    for body in ({"error": "Unauthorized"}, {"detail": "Invalid API key"}):
        decisions = judging.auth_refused(reply(body, status=401), "no key", "openai")
        assert [(d.clause_id, held(d)) for d in decisions] == [
            ("openai.auth.required", True),
            ("openai.errors.shape", False),
        ]
    good = judging.auth_refused(refused(401), "no key", "openai")
    assert [held(d) for d in good] == [True, True]


# -- the phases against live servers


class RefusesTools(ReferenceModel):
    """vLLM without --enable-auto-tool-choice: every request offering tools gets a 400 JSON error."""

    def validate(self, body: Any) -> None:
        super().validate(body)
        if isinstance(body, dict) and body.get("tools"):
            raise Refusal(400, "tool calls need the auto tool choice flags", "tools")


class CutsEveryCall(ReferenceModel):
    """A model that never finishes a call within the cap: every tool reply is cut, finish_reason length."""

    def call_tools(self, body: dict[str, Any], limit: int, used: int) -> Completion:
        return Completion("<tool_call>", [], "length", used, ["<tool_call>"])


class NoDoneNoUsage(ReferenceModel):
    """Two faults of the stream: no [DONE], and no usage chunk even when include_usage asks for one."""

    def chunks(self, body: dict[str, Any], completion: Completion) -> list[dict[str, Any]]:
        return [c for c in super().chunks(body, completion) if c.get("choices")]

    async def answer(self, body: dict[str, Any]) -> Any:
        if body.get("stream"):
            events = [f"data: {json.dumps(c)}\n\n" for c in self.chunks(body, self.complete(body))]
            return StreamingResponse(iter(events), media_type="text/event-stream")
        return await super().answer(body)


async def test_a_target_refusing_tool_requests_fails_no_stream_or_tool_shape_clause():
    with serving(make_app(RefusesTools())) as url:
        report = await check(url, phases=["tools", "stream"])
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}
    rolled = {entry.clause_id: entry.verdict for entry in report.rolled_up()}
    assert rolled["openai.stream.format"] is Verdict.PASS  # the text stream was judged
    assert rolled["openai.errors.shape"] is Verdict.PASS  # the refusals' bodies were judged
    for clause_id in ("openai.tools.call-shape", "openai.tools.truncated-call", "openai.tools.parallel"):
        assert rolled[clause_id] is Verdict.INFO, clause_id


async def test_a_target_cut_at_max_tokens_fails_no_tool_clause():
    with serving(make_app(CutsEveryCall())) as url:
        report = await check(url, phases=["tools", "stream"])
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}
    assert "cut at max_tokens" in report.results[("tools", "openai.tools.call-shape")].actual


async def test_a_failed_stream_format_leaves_the_usage_chunk_judged():
    with serving(make_app(NoDoneNoUsage())) as url:
        report = await check(url, phases=["stream"])
    bad = verdicts(report, Verdict.FAIL, Verdict.WARN)
    assert bad.keys() == {"openai.stream.format", "openai.stream.usage-chunk"}, bad
    assert "expected only in the last" in bad["openai.stream.usage-chunk"]


class DetailOn401(ReferenceModel):
    """FastAPI's HTTPException body for a missing key, beside well-shaped errors elsewhere."""

    def error(self, refusal: Any) -> Any:
        if refusal.status == 401:
            return JSONResponse({"detail": refusal.message}, status_code=401)
        return super().error(refusal)


async def test_a_detail_body_on_401_fails_the_error_shape():
    model = DetailOn401()
    model.api_key = "sk-test"
    with serving(make_app(model)) as url:
        report = await check(url, {"api_key": "sk-test"}, phases=["errors"])
    assert verdicts(report, Verdict.FAIL, Verdict.WARN).keys() == {"openai.errors.shape"}


async def test_a_profile_without_n_or_stream_usage_leaves_those_clauses_unsupported():
    with serving(make_app()) as url:
        report = await check(url, {"preset": "llama-cpp"}, phases=["chat", "stream"])
    assert report.results[("chat", "openai.chat.n-choices")].verdict is Verdict.UNSUPPORTED
    # The half without include_usage is still judged.
    assert report.results[("stream", "openai.stream.usage-chunk")].verdict is Verdict.PASS
    assert verdicts(report, Verdict.FAIL, Verdict.WARN, Verdict.ERROR) == {}


def test_bytes_that_are_no_text_are_no_stream_difference():
    """transformers serve's stream holds back half a character at a cut that its JSON reply shows as U+FFFD."""
    json_reply = reply(completion("a\ufffdD\ufffd"))
    json_reply.body["choices"][0]["finish_reason"] = "length"
    held_back = stream_of(chunk({"role": "assistant", "content": "a\ufffd"}), chunk({"content": "D"}, "length"))
    assert held(judging.stream_equivalent(json_reply, held_back, json_reply, "a text reply"))
    other = stream_of(chunk({"role": "assistant", "content": "a\ufffd"}), chunk({"content": "E"}, "length"))
    assert held(judging.stream_equivalent(json_reply, other, json_reply, "a text reply")) is False


def test_a_named_tool_choice_may_finish_with_stop_as_openai_and_vllm_answer_it():
    """OpenAI's API, and vLLM after it (chat_completion/serving.py), answer a call forced by name with "stop"."""
    from checks.openai.requests import single_tool_body

    named = tool_reply('{"city": "Paris"}', finish="stop")
    named.sent = single_tool_body("m", 16)
    assert held(judging_tools.tool_call_shape(named, TOOLS))
    assert held(judging_tools.truncated_call(named))
    required = tool_reply('{"city": "Paris"}', finish="stop")
    required.sent = {**single_tool_body("m", 16), "tool_choice": "required"}
    assert held(judging_tools.tool_call_shape(required, TOOLS)) is False
    assert held(judging_tools.truncated_call(required)) is False
