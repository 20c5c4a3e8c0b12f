"""The openai-chat judges on recorded replies: no server, no report, decisions with expected and actual."""

from __future__ import annotations

import json
from typing import Any

from checks.http_client import Reply, StreamReply, parse_sse
from checks.openai import judging, judging_tools
from checks.openai.requests import TOOLS, UNICODE_TEXT
from checks.openai.shapes import error_shape_problem, schema_problems
from checks.openai.sse import assembled, stream_format_problems
from tests.checks.decisions import held


def completion(content: str = "Hello.", **extra: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        **extra,
    }


def reply(body: Any, status: int = 200, headers: list[tuple[str, str]] | None = None) -> Reply:
    text = json.dumps(body)
    default = [("content-type", "application/json"), ("content-length", str(len(text)))]
    shown = default if headers is None else headers
    return Reply(status, "application/json", text, body, True, headers=shown, raw_size=len(text))


def stream_of(*chunks: Any, done: bool = True) -> StreamReply:
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + ("data: [DONE]\n\n" if done else "")
    return StreamReply(200, "text/event-stream", events=parse_sse(text))


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    base = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m"}
    return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def test_a_chat_completion_holds_the_shape_and_reply_rules():
    good = reply(completion())
    assert held(judging.chat_shape(good))
    decisions = judging.reply_rules(good, max_tokens=16, honours_max_tokens=True)
    assert [d.clause_id for d in decisions] == [
        "openai.chat.finish-reason",
        "openai.usage.consistent",
        "openai.usage.within-max-tokens",
        "openai.http.hygiene",
    ]
    assert all(held(d) for d in decisions)


def test_a_plain_text_content_type_misses_the_chat_shape():
    bad = reply(completion())
    bad.content_type = "text/plain"
    decision = judging.chat_shape(bad)
    assert held(decision) is False and "content-type 'text/plain'" in decision.actual


def test_usage_that_does_not_add_up_is_named():
    body = completion(usage={"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 9})
    usage = judging.reply_rules(reply(body), max_tokens=None, honours_max_tokens=True)[1]
    assert held(usage) is False and usage.actual == "total_tokens 9 != 5 + 2"


def test_max_tokens_is_left_to_the_phase_when_not_honoured():
    decisions = judging.reply_rules(reply(completion()), max_tokens=1, honours_max_tokens=False)
    assert "openai.usage.within-max-tokens" not in [d.clause_id for d in decisions]
    assert judging.max_tokens_compared(reply(completion()), 1)


def test_hygiene_finds_a_wrong_content_length_and_repeated_headers():
    headers = [("content-type", "application/json"), ("content-type", "text/plain"), ("content-length", "3")]
    problems = judging.hygiene_problems(reply(completion(), headers=headers))
    assert problems[0] == "2 content-type headers" and problems[1].startswith("content-length 3 but")


def test_n_two_passes_with_two_indices_or_a_json_refusal():
    two = completion()
    two["choices"].append({**two["choices"][0], "index": 1})
    assert held(judging.two_choices(reply(two)))
    assert held(judging.two_choices(reply({"error": {"message": "no"}}, status=400)))
    assert held(judging.two_choices(reply(completion()))) is False


def test_unicode_is_judged_on_the_echo_only_for_an_echoing_target():
    assert held(judging.unicode_round_trip(reply(completion(UNICODE_TEXT)), echoing=True))
    assert held(judging.unicode_round_trip(reply(completion("other")), echoing=True)) is False
    assert held(judging.unicode_round_trip(reply(completion(f"{UNICODE_TEXT} \ufffd")), echoing=True)) is False


def test_a_replacement_character_a_model_wrote_itself_is_not_judged():
    """Issue 19 item 8: U+FFFD in the text of a target not shown to echo is the model's own text."""
    for text in ("bad \ufffd", "other"):
        decision = judging.unicode_round_trip(reply(completion(text)), echoing=False)
        assert held(decision) is None and (decision.outcome != "error") and "not judged" in decision.actual
    streamed = stream_of(chunk({"role": "assistant", "content": "\ufffd"}, "stop"))
    assert held(judging.stream_unicode(streamed, echoing=False)) is None


def test_usage_chunk_is_not_decided_without_a_stream():
    """Issue 19 item 7: a plain JSON answer has no chunks, so it cannot pass the no-usage half."""
    plain = StreamReply(200, "application/json", error_reply=reply(completion()))
    assert held(judging.usage_chunk(plain, asked=False)) is None
    unasked = stream_of(
        chunk({"role": "assistant", "content": "Hi"}, "stop"),
        {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": {}},
    )
    assert held(judging.usage_chunk(unasked, asked=False)) is False


def tool_reply(arguments: str, finish: str = "tool_calls", call_id: str = "call_1") -> Reply:
    call = {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    body = completion()
    body["choices"][0] = {
        "index": 0,
        "message": {"role": "assistant", "content": None, "tool_calls": [call]},
        "finish_reason": finish,
    }
    return reply(body)


def test_a_tool_call_is_judged_against_the_offered_schema():
    assert held(judging_tools.tool_call_shape(tool_reply('{"city": "Paris"}'), TOOLS))
    broken = judging_tools.tool_call_shape(tool_reply('{"city": '), TOOLS)
    assert held(broken) is False and "not valid JSON" in broken.actual


def test_a_truncated_call_passes_with_length_or_complete_arguments():
    assert held(judging_tools.truncated_call(tool_reply('{"ci', finish="length")))
    assert held(judging_tools.truncated_call(tool_reply('{"city": "Paris"}')))
    assert held(judging_tools.truncated_call(tool_reply('{"ci'))) is False


def test_an_unknown_call_id_is_refused_or_noted_as_lenient():
    assert held(judging_tools.unknown_call_id(reply({"error": {}}, status=400), strict=True))
    assert held(judging_tools.unknown_call_id(reply(completion()), strict=False)) is None
    assert held(judging_tools.unknown_call_id(reply(completion()), strict=True)) is False


def test_a_stray_call_id_is_judged_only_where_the_same_conversation_with_the_right_id_is_answered():
    """llama-cpp-python 0.3.36 answers 500 to its own assistant tool-call message echoed (content null):
    the stray id's twin then fails the same way, which says nothing about the id."""
    crashed = reply({"error": {"message": "validation", "type": "internal_server_error"}}, status=500)
    answered, refused = reply(completion()), reply({"error": {}}, status=400)
    unjudged = judging_tools.unknown_call_id(crashed, strict=False, echoed=crashed)
    assert held(unjudged) is None and "answered 500 too" in unjudged.actual
    assert held(judging_tools.unknown_call_id(refused, strict=True, echoed=refused)) is None
    # With the right id answered, a 5xx for the stray one is still a miss, and a 4xx a pass.
    assert held(judging_tools.unknown_call_id(crashed, strict=False, echoed=answered)) is False
    assert held(judging_tools.unknown_call_id(refused, strict=True, echoed=answered))


def test_an_invalid_request_refused_with_a_200_is_lenient_only_when_allowed():
    accepted = judging.invalid_refused(reply(completion()), "n 0", lenient_ok=True, strict=False, error_shape="openai")
    assert [held(d) for d in accepted] == [None]
    refused = reply({"error": {"message": "bad", "type": "invalid_request_error", "param": "n", "code": None}}, 422)
    decisions = judging.invalid_refused(refused, "n 0", lenient_ok=True, strict=True, error_shape="openai")
    assert [(d.clause_id, held(d)) for d in decisions] == [
        ("openai.errors.rejects-invalid", True),
        ("openai.errors.status-400", False),
        ("openai.errors.shape", True),
    ]


def test_error_shapes():
    assert error_shape_problem({"error": "no"}, "miles") == ""
    assert error_shape_problem({"error": "no"}, "openai").startswith("the body is not")
    assert error_shape_problem({"error": {"message": "m", "type": "t"}}, "openai") == "error lacks param or code"


def test_schema_problems_name_missing_extra_and_mistyped_arguments():
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    assert schema_problems({"city": "Paris"}, schema) == []
    assert schema_problems({"town": 1}, schema) == ["required 'city' missing", "unexpected argument 'town'"]
    assert schema_problems({"city": 3}, schema) == ["'city' is not a string"]
    assert schema_problems([], schema) == ["the arguments are not a JSON object"]


def test_a_well_formed_stream_assembles_to_the_json_reply():
    stream = stream_of(
        chunk({"role": "assistant", "content": "Hel"}),
        chunk({"content": "lo."}, "stop"),
        {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [], "usage": {}},
    )
    assert stream_format_problems(stream) == []
    assert held(judging.stream_format(stream, "text"))
    assert held(judging.usage_chunk(stream, asked=True))
    assert held(judging.usage_chunk(stream, asked=False)) is False
    assert assembled(stream) == {"content": "Hello.", "tool_calls": [], "finish_reason": "stop"}
    json_reply = reply(completion("Hello."))
    assert held(judging.stream_equivalent(json_reply, stream, json_reply, "text"))


def test_a_stream_without_done_or_role_is_named():
    problems = stream_format_problems(stream_of(chunk({"content": "x"}, "stop"), done=False))
    assert problems == ["the first delta has role None", "no data: [DONE]"]


def test_chunks_must_share_id_and_created_but_may_name_the_model_two_ways():
    # LiteLLM 1.74 in front of vLLM: content chunks name the model as asked, the closing ones with its provider.
    renamed = stream_of(chunk({"role": "assistant", "content": "a"}), chunk({}, "stop", model="hosted_vllm/m"))
    assert stream_format_problems(renamed) == []
    other_id = stream_of(chunk({"role": "assistant", "content": "a"}), chunk({}, "stop", id="c2"))
    assert stream_format_problems(other_id) == ["chunks differ in id"]


def test_two_json_replies_that_differ_leave_the_stream_unjudged():
    stream = stream_of(chunk({"role": "assistant", "content": "a"}, "stop"))
    noted = judging.stream_equivalent(reply(completion("a")), stream, reply(completion("b")), "text")
    assert held(noted) is None and (noted.outcome != "error")
    failed = judging.stream_equivalent(reply({}, status=500), stream, reply(completion()), "text")
    assert not (failed.outcome != "error") and failed.actual.startswith("text: the JSON replies failed")


def test_parallel_answers_catch_a_swapped_nonce():
    codes = ["n0000000001", "n0000000002"]
    replies = [reply(completion(f"say {codes[1]}", id="a")), reply(completion(f"say {codes[0]}", id="b"))]
    decision = judging.parallel_answers(codes, replies, echoing=True)
    assert held(decision) is False and "carries ['n0000000002']" in decision.actual


def test_repeats_that_diverge_are_shown():
    replies = [reply(completion("a")), reply(completion("a")), reply(completion("b"))]
    diverged, rate = judging.divergence(replies)
    assert diverged == [2] and rate == "1/3 repeats diverged from the first"
    decisions = judging.repeats_identical(replies, ("openai.determinism.repeat",))
    assert held(decisions[0]) is False
    assert decisions[0].actual.startswith("1/3 repeats diverged from the first; repeat 2:")


def test_context_overflow_accepts_a_refusal_or_a_length_cut():
    cut = completion()
    cut["choices"][0]["finish_reason"] = "length"
    assert held(judging.context_overflow(reply(cut), 100))
    assert held(judging.context_overflow(reply({"error": {}}, status=400), 100))
    assert held(judging.context_overflow(reply(completion()), 100)) is False


def test_a_call_reported_as_tool_calls_but_not_the_uncapped_call_was_cut():
    from checks.openai.shapes import comparable

    uncapped = comparable(tool_reply('{"city": "Paris"}').body)
    assert held(judging_tools.truncated_call(tool_reply('{"city": "Paris"}'), uncapped))
    closed = judging_tools.truncated_call(tool_reply('{"city": "Pa"}'), uncapped)
    assert held(closed) is False and "not the call made without the cap" in closed.actual
    assert held(judging_tools.truncated_call(tool_reply('{"city": "Pa"}')))  # nothing shown to compare with


def test_results_are_judged_paired_by_id_only_on_a_target_shown_to_pair_them():
    cities = ["Paris", "Tokyo"]
    right = reply(completion("Paris: 17 degrees; Tokyo: 29 degrees"))
    swapped = reply(completion("Paris: 29 degrees; Tokyo: 17 degrees"))
    assert held(judging_tools.result_pairing(right, right, cities))
    assert held(judging_tools.result_pairing(right, swapped, cities)) is False
    free = judging_tools.result_pairing(reply(completion("It is mild.")), swapped, cities)
    assert held(free) is None and "not judged" in free.actual


def test_streamed_tool_calls_need_one_id_per_index():
    def head(index, call_id):
        return chunk({"tool_calls": [{"index": index, "id": call_id, "function": {"name": "f", "arguments": ""}}]})

    good = stream_of(chunk({"role": "assistant"}), head(0, "a"), head(1, "b"), chunk({}, "tool_calls"))
    shared = stream_of(chunk({"role": "assistant"}), head(0, "a"), head(1, "a"), chunk({}, "tool_calls"))
    assert held(judging_tools.streamed_call_ids(good, "calls"))
    assert held(judging_tools.streamed_call_ids(shared, "calls")) is False


def test_an_unknown_role_accepted_is_a_should_miss_and_a_5xx_a_must_miss():
    accepted = judging.unknown_role(reply(completion()), strict=True, error_shape="openai")
    assert [(d.clause_id, held(d)) for d in accepted] == [("openai.messages.unknown-role", False)]
    lenient = judging.unknown_role(reply(completion()), strict=False, error_shape="openai")
    assert [held(d) for d in lenient] == [None]
    crashed = {
        d.clause_id: held(d) for d in judging.unknown_role(reply({}, status=500), strict=True, error_shape="openai")
    }
    assert crashed == {"openai.messages.unknown-role": False, "openai.errors.rejects-invalid": False}
    refused = judging.unknown_role(
        reply({"error": {"message": "m", "type": "t", "param": None, "code": None}}, status=400),
        strict=True,
        error_shape="openai",
    )
    assert all(held(d) for d in refused)
