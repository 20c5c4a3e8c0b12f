"""The official `openai` client talking to a real `transformers serve` through the tap (openai-chat).

The client does what a trainer's rollout worker does: lists models, asks a chat of two turns (the
second carrying the first reply), and streams a chat with and without `include_usage`. The tap
forwards every byte and judges copies; its verdicts are held to `TAP_VERDICTS`, and
docs/real-peers.md says why each non-pass is a true fault of the server.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.tap import openai as tap_openai
from checks.verdicts import Verdict
from tests.checks.tap.conftest import tapping
from tests.realpeers.transformers.conftest import NO_VENV, PYTHON

openai = pytest.importorskip("openai")
pytestmark = pytest.mark.skipif(not PYTHON, reason=NO_VENV)
MAX_TOKENS = 8
# The verdicts other than `skip` (the clauses only an active run decides, and those this traffic never exercised).
TAP_VERDICTS = {
    "openai.models.list": Verdict.PASS,
    "openai.chat.shape": Verdict.PASS,
    "openai.chat.finish-reason": Verdict.PASS,
    "openai.usage.consistent": Verdict.PASS,
    "openai.usage.within-max-tokens": Verdict.PASS,
    "openai.http.hygiene": Verdict.PASS,
    "openai.stream.format": Verdict.FAIL,
    "openai.stream.usage-chunk": Verdict.WARN,
}


async def rollout(client: Any, model: str) -> list[str]:
    """What the client read back: each reply's text, and each stream's joined deltas."""
    await client.models.list()
    messages: list[Any] = [{"role": "user", "content": "The sea is wide."}]
    first = await client.chat.completions.create(model=model, messages=messages, max_tokens=MAX_TOKENS)
    messages += [{"role": "assistant", "content": first.choices[0].message.content}, {"role": "user", "content": "Hi."}]
    second = await client.chat.completions.create(model=model, messages=messages, max_tokens=MAX_TOKENS)
    texts = [first.choices[0].message.content or "", second.choices[0].message.content or ""]
    for options in (None, {"include_usage": True}):
        extra = {"stream_options": options} if options else {}
        stream = await client.chat.completions.create(
            model=model, messages=messages[:1], max_tokens=MAX_TOKENS, stream=True, **extra
        )
        texts.append("".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]))
    return texts


async def test_the_official_client_through_the_tap_gets_the_recorded_verdicts(transformers_serve):
    url, model = transformers_serve
    async with tapping(tap_openai.spec(), url.removesuffix("/v1"), "http") as tapped:
        async with openai.AsyncOpenAI(base_url=f"{tapped.url}/v1", api_key="sk-unused", max_retries=0) as client:
            texts = await rollout(client, model)
    assert all(texts), texts
    assert tapped.verdicts() == TAP_VERDICTS
    tallies = tapped.ledger.tallies
    judged = {clause: tallies[clause].judged for clause in ("openai.models.list", "openai.chat.shape")}
    assert judged == {"openai.models.list": 1, "openai.chat.shape": 2}
    # Both streams break both stream rules: no [DONE] in either, and usage on the finish chunk in either.
    assert (tallies["openai.stream.format"].violated, tallies["openai.stream.usage-chunk"].violated) == (2, 2)
    first = tallies["openai.stream.usage-chunk"].first
    last = tallies["openai.stream.usage-chunk"].last
    assert first is not None and "without include_usage" in first.actual
    assert last is not None and "the usage chunk has choices" in last.actual
    assert tapped.ledger.unjudged == 0 and tapped.run.relay.stats.reader_faults == []
