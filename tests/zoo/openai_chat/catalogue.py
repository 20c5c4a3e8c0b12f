"""The openai-chat zoo: OpenAI-compatible endpoints, each the reference model with ONE fault.

`start` is the module's `make_app` (an ASGI app); the module's docstring says what it breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.core import Verdict
from tests.zoo.entry import ZooEntry
from tests.zoo.openai_chat import (
    any_model_accepted,
    auth_detail_body,
    auth_ignored,
    bad_json_500,
    chat_without_created,
    context_unbounded,
    duplicate_call_ids,
    error_shape_string,
    error_type_none,
    finish_reason_eos,
    logprobs_ignored,
    logprobs_unasked,
    max_tokens_ignored,
    models_without_object,
    n_ignored,
    no_done,
    nonce_crosstalk,
    nondeterministic,
    parallel_calls_merged,
    prompt_tokens_drift,
    refuses_with_422,
    rejects_own_tool_message,
    results_by_position,
    stray_call_id_accepted,
    stream_differs,
    stream_duplicate_call_ids,
    stream_same_index,
    truncated_call_closed,
    truncated_tool_call,
    two_date_headers,
    unicode_mangled,
    unknown_role_accepted,
    usage_over_max_tokens,
    usage_total_wrong,
    usage_unasked,
)


@dataclass(frozen=True, kw_only=True)
class OpenAIEntry(ZooEntry):
    """A broken endpoint; `start()` is its ASGI app."""

    verdict: Verdict = Verdict.FAIL  # WARN: the clause is a SHOULD


ZOO: dict[str, OpenAIEntry] = {
    "bad-json-500": OpenAIEntry(bad_json_500.make_app, "openai.errors.rejects-invalid"),
    "duplicate-call-ids": OpenAIEntry(
        duplicate_call_ids.make_app,
        "openai.tools.call-shape",
        knock_on=frozenset({"openai.tools.round-trip", "openai.tools.result-by-id"}),
    ),
    "error-shape-string": OpenAIEntry(error_shape_string.make_app, "openai.errors.shape"),
    "error-type-none": OpenAIEntry(error_type_none.make_app, "openai.errors.shape"),
    "auth-detail-body": OpenAIEntry(auth_detail_body.make_app, "openai.errors.shape", options={"api_key": "sk-zoo"}),
    "finish-reason-eos": OpenAIEntry(
        finish_reason_eos.make_app, "openai.chat.finish-reason", knock_on=frozenset({"openai.stream.format"})
    ),
    "logprobs-ignored": OpenAIEntry(logprobs_ignored.make_app, "openai.logprobs.content"),
    "max-tokens-ignored": OpenAIEntry(
        max_tokens_ignored.make_app, "openai.limits.max-tokens", knock_on=frozenset({"openai.usage.within-max-tokens"})
    ),
    "no-done": OpenAIEntry(no_done.make_app, "openai.stream.format"),
    "nonce-crosstalk": OpenAIEntry(
        nonce_crosstalk.make_app,
        "openai.concurrency.parallel",
        knock_on=frozenset({"openai.determinism.repeat", "openai.determinism.declared"}),
    ),
    "nondeterministic": OpenAIEntry(
        nondeterministic.make_app, "openai.determinism.declared", knock_on=frozenset({"openai.determinism.repeat"})
    ),
    "parallel-calls-merged": OpenAIEntry(
        parallel_calls_merged.make_app,
        "openai.tools.parallel",
        knock_on=frozenset({"openai.stream.equivalent", "openai.tools.call-shape", "openai.tools.result-by-id"}),
    ),
    "results-by-position": OpenAIEntry(results_by_position.make_app, "openai.tools.result-by-id", verdict=Verdict.WARN),
    "rejects-own-tool-message": OpenAIEntry(rejects_own_tool_message.make_app, "openai.tools.round-trip"),
    "stream-differs": OpenAIEntry(
        stream_differs.make_app, "openai.stream.equivalent", knock_on=frozenset({"openai.unicode.round-trip"})
    ),
    "stream-duplicate-call-ids": OpenAIEntry(stream_duplicate_call_ids.make_app, "openai.tools.call-shape"),
    "stream-same-index": OpenAIEntry(
        stream_same_index.make_app, "openai.stream.equivalent", knock_on=frozenset({"openai.tools.call-shape"})
    ),
    "truncated-call-closed": OpenAIEntry(truncated_call_closed.make_app, "openai.tools.truncated-call"),
    "truncated-tool-call": OpenAIEntry(truncated_tool_call.make_app, "openai.tools.truncated-call"),
    "unknown-role-accepted": OpenAIEntry(
        unknown_role_accepted.make_app, "openai.messages.unknown-role", verdict=Verdict.WARN
    ),
    "usage-over-max-tokens": OpenAIEntry(usage_over_max_tokens.make_app, "openai.usage.within-max-tokens"),
    "usage-total-wrong": OpenAIEntry(usage_total_wrong.make_app, "openai.usage.consistent"),
    "usage-unasked": OpenAIEntry(usage_unasked.make_app, "openai.stream.usage-chunk", verdict=Verdict.WARN),
    "any-model-accepted": OpenAIEntry(any_model_accepted.make_app, "openai.errors.unknown-model", verdict=Verdict.WARN),
    "auth-ignored": OpenAIEntry(
        auth_ignored.make_app, "openai.auth.required", options={"api_key": "sk-zoo"}, verdict=Verdict.WARN
    ),
    "chat-without-created": OpenAIEntry(
        chat_without_created.make_app,
        "openai.chat.shape",
        knock_on=frozenset({"openai.concurrency.parallel"}),
        may_error=True,
    ),
    "context-unbounded": OpenAIEntry(
        context_unbounded.make_app,
        "openai.limits.context-overflow",
        options={"context_window": 4096},
        verdict=Verdict.WARN,
    ),
    "logprobs-unasked": OpenAIEntry(
        logprobs_unasked.make_app, "openai.logprobs.absent-unless-asked", verdict=Verdict.WARN
    ),
    "models-without-object": OpenAIEntry(models_without_object.make_app, "openai.models.list"),
    "n-ignored": OpenAIEntry(n_ignored.make_app, "openai.chat.n-choices", verdict=Verdict.WARN),
    "prompt-tokens-drift": OpenAIEntry(
        prompt_tokens_drift.make_app, "openai.usage.prompt-stable", verdict=Verdict.WARN
    ),
    "refuses-with-422": OpenAIEntry(refuses_with_422.make_app, "openai.errors.status-400", verdict=Verdict.WARN),
    "stray-call-id-accepted": OpenAIEntry(
        stray_call_id_accepted.make_app, "openai.tools.unknown-call-id", verdict=Verdict.WARN
    ),
    "two-date-headers": OpenAIEntry(two_date_headers.make_app, "openai.http.hygiene", verdict=Verdict.WARN),
    "unicode-mangled": OpenAIEntry(unicode_mangled.make_app, "openai.unicode.round-trip", verdict=Verdict.WARN),
}
