"""openai-chat through the tap with the official `openai` client: llmock passes; token fidelity is judged
across turns, a router that drops token ids between two hops is flagged, and credentials never reach the
recorded evidence."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.asgi_server import serve_asgi
from checks.tap import ledger as tap_ledger
from checks.tap import openai as tap_openai
from checks.verdicts import Verdict
from tests.checks.tap.conftest import Tapped, tapping
from tests.checks.tap.tokens_peers import engine_app, router_app

openai = pytest.importorskip("openai")
llmock_testing = pytest.importorskip("llmock.testing")
SECRET = "sk-live-0123456789"
ASK = {"return_token_ids": True}


async def two_turns(url: str) -> None:
    """A conversation of two turns, the second continuing the first with its reply."""
    async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=SECRET, max_retries=0) as client:
        messages: list[Any] = [{"role": "user", "content": "hi"}]
        first = await client.chat.completions.create(
            model="toy", messages=messages, logprobs=True, top_logprobs=0, extra_body=ASK
        )
        messages += [
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "more"},
        ]
        await client.chat.completions.create(model="toy", messages=messages, logprobs=True, extra_body=ASK)


def evidence_text(tapped: Tapped) -> str:
    return json.dumps(tapped.ledger.to_dict()) + json.dumps([list(log.recent) for log in tapped.ledger.logs.values()])


async def test_llmock_with_the_official_client_passes_through_the_tap():
    with llmock_testing.LLMockServer() as server:
        async with tapping(tap_openai.spec("llmock"), server.base_url("openai").removesuffix("/v1"), "http") as tapped:
            async with openai.AsyncOpenAI(base_url=f"{tapped.url}/v1", api_key=SECRET, max_retries=0) as client:
                model = (await client.models.list()).data[0].id
                reply = await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
                stream = await client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": "hi"}], stream=True
                )
                pieces = [chunk async for chunk in stream]
    assert reply.choices[0].message.content and pieces
    verdicts = tapped.verdicts()
    for clause in ("openai.models.list", "openai.chat.shape", "openai.usage.consistent", "openai.stream.format"):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.flagged() == set()


async def test_token_ids_that_extend_across_turns_pass():
    engine = await serve_asgi(engine_app())
    try:
        async with tapping(tap_openai.spec(), engine.url, "http") as tapped:
            await two_turns(tapped.url)
    finally:
        await engine.close()
    verdicts = tapped.verdicts()
    for clause in ("tap.openai.token-ids-extend", "tap.openai.token-ids-kept", "tap.openai.logprobs-per-token"):
        assert verdicts.get(clause) is Verdict.PASS, (clause, verdicts)
    assert tapped.ledger.tallies["tap.openai.token-ids-extend"].judged == 1
    text = evidence_text(tapped)
    assert SECRET not in text and "[scrubbed]" in text


async def test_a_template_that_respells_earlier_replies_breaks_extension():
    engine = await serve_asgi(engine_app(respells_replies=True))
    try:
        async with tapping(tap_openai.spec(), engine.url, "http") as tapped:
            await two_turns(tapped.url)
    finally:
        await engine.close()
    assert tapped.flagged() == {"tap.openai.token-ids-extend"}
    first = tapped.ledger.tallies["tap.openai.token-ids-extend"].first
    assert first is not None and "differs at position 4" in first.actual


@pytest.mark.parametrize(("preset", "verdict"), [("strict-openai", Verdict.WARN), ("miles-session", Verdict.FAIL)])
async def test_a_router_dropping_token_ids_between_two_hops_is_flagged(preset, verdict):
    """client -> tap -> router -> tap -> engine: the tap by the engine sees the ids, the one by the client not."""
    engine = await serve_asgi(engine_app())
    try:
        async with tapping(tap_openai.spec(preset), engine.url, "http") as near_engine:
            router = await serve_asgi(router_app(near_engine.url))
            try:
                async with tapping(tap_openai.spec(preset), router.url, "http") as near_client:
                    await two_turns(near_client.url)
            finally:
                await router.close()
    finally:
        await engine.close()
    assert near_engine.flagged() == set()
    assert near_engine.verdicts()["tap.openai.token-ids-kept"] is Verdict.PASS
    assert near_client.verdicts()["tap.openai.token-ids-kept"] is verdict
    assert near_client.flagged() == {"tap.openai.token-ids-kept"}


async def test_every_refusal_the_client_meets_is_held_to_the_error_shape():
    """Issue 30: a 401 `{"detail": ...}` a client meets is judged by openai.errors.shape, a well-shaped one passes."""
    from checks.openai.reference import ReferenceModel, make_app
    from tests.checks.openai.test_independence import DetailOn401

    for model, verdict in ((ReferenceModel(), Verdict.PASS), (DetailOn401(), Verdict.FAIL)):
        model.api_key = "sk-right"
        upstream = await serve_asgi(make_app(model))
        try:
            async with tapping(tap_openai.spec(), upstream.url, "http") as tapped:
                async with openai.AsyncOpenAI(base_url=f"{tapped.url}/v1", api_key=SECRET, max_retries=0) as client:
                    with pytest.raises(openai.AuthenticationError):
                        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        finally:
            await upstream.close()
        assert tapped.verdicts().get("openai.errors.shape") is verdict, tapped.verdicts()


async def test_a_tool_call_reply_is_judged_for_its_shape_from_the_copy():
    """Issue 32 item 7: the tool calls a client gets are held to openai.tools.call-shape against the tools its
    request offered; a call whose arguments are not JSON fails it, a reply in words decides nothing."""
    from checks.openai.reference import MODEL_ID, ReferenceModel, make_app

    class CutArguments(ReferenceModel):
        def call_tools(self, body, limit, used):
            completion = super().call_tools(body, limit, used)
            for call in completion.calls:
                call["function"]["arguments"] = call["function"]["arguments"][:-2]
            return completion

    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
    asks = [{"role": "user", "content": 'Weather in "Paris"?'}]
    for model, verdict in ((ReferenceModel(), Verdict.PASS), (CutArguments(), Verdict.FAIL)):
        upstream = await serve_asgi(make_app(model))
        try:
            async with tapping(tap_openai.spec(), upstream.url, "http") as tapped:
                async with openai.AsyncOpenAI(base_url=f"{tapped.url}/v1", api_key=SECRET, max_retries=0) as client:
                    await client.chat.completions.create(model=MODEL_ID, messages=asks, tools=[weather])
        finally:
            await upstream.close()
        assert tapped.verdicts().get("openai.tools.call-shape") is verdict, tapped.verdicts()
    upstream = await serve_asgi(make_app(ReferenceModel()))
    try:
        async with tapping(tap_openai.spec(), upstream.url, "http") as tapped:
            async with openai.AsyncOpenAI(base_url=f"{tapped.url}/v1", api_key=SECRET, max_retries=0) as client:
                await client.chat.completions.create(model=MODEL_ID, messages=asks)  # no tools offered: words
    finally:
        await upstream.close()
    unexercised = tapped.ledger.tallies["openai.tools.call-shape"]
    assert (unexercised.judged, unexercised.verdict()) == (0, Verdict.SKIP), unexercised.to_dict()
    assert unexercised.skip_reason != tap_ledger.NEEDS_ACTIVE_RUN  # a copy can decide it, this one did not
