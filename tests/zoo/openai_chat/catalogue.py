"""The openai-chat zoo: OpenAI-compatible endpoints, each the reference model with ONE fault.

`start` is the module's `make_app` (an ASGI app); the module's docstring says what it breaks.
"""

from __future__ import annotations

from tests.zoo.entry import ZooEntry
from tests.zoo.openai_chat import (
    bad_json_500,
    duplicate_call_ids,
    error_shape_string,
    finish_reason_eos,
    logprobs_ignored,
    max_tokens_ignored,
    no_done,
    nonce_crosstalk,
    nondeterministic,
    parallel_calls_merged,
    rejects_own_tool_message,
    stream_differs,
    stream_same_index,
    truncated_tool_call,
    usage_over_max_tokens,
    usage_total_wrong,
)

ZOO: dict[str, ZooEntry] = {
    "bad-json-500": ZooEntry(bad_json_500.make_app, "openai.errors.rejects-invalid"),
    "duplicate-call-ids": ZooEntry(
        duplicate_call_ids.make_app, "openai.tools.call-shape", knock_on=frozenset({"openai.tools.round-trip"})
    ),
    "error-shape-string": ZooEntry(error_shape_string.make_app, "openai.errors.shape"),
    "finish-reason-eos": ZooEntry(
        finish_reason_eos.make_app, "openai.chat.finish-reason", knock_on=frozenset({"openai.stream.format"})
    ),
    "logprobs-ignored": ZooEntry(logprobs_ignored.make_app, "openai.logprobs.content"),
    "max-tokens-ignored": ZooEntry(
        max_tokens_ignored.make_app, "openai.limits.max-tokens", knock_on=frozenset({"openai.usage.within-max-tokens"})
    ),
    "no-done": ZooEntry(no_done.make_app, "openai.stream.format"),
    "nonce-crosstalk": ZooEntry(
        nonce_crosstalk.make_app,
        "openai.concurrency.parallel",
        knock_on=frozenset({"openai.determinism.repeat", "openai.determinism.declared"}),
    ),
    "nondeterministic": ZooEntry(
        nondeterministic.make_app, "openai.determinism.declared", knock_on=frozenset({"openai.determinism.repeat"})
    ),
    "parallel-calls-merged": ZooEntry(
        parallel_calls_merged.make_app, "openai.tools.parallel", knock_on=frozenset({"openai.stream.equivalent"})
    ),
    "rejects-own-tool-message": ZooEntry(rejects_own_tool_message.make_app, "openai.tools.round-trip"),
    "stream-differs": ZooEntry(
        stream_differs.make_app, "openai.stream.equivalent", knock_on=frozenset({"openai.unicode.round-trip"})
    ),
    "stream-same-index": ZooEntry(stream_same_index.make_app, "openai.stream.equivalent"),
    "truncated-tool-call": ZooEntry(truncated_tool_call.make_app, "openai.tools.truncated-call"),
    "usage-over-max-tokens": ZooEntry(usage_over_max_tokens.make_app, "openai.usage.within-max-tokens"),
    "usage-total-wrong": ZooEntry(usage_total_wrong.make_app, "openai.usage.consistent"),
}
