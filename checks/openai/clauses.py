"""The openai-chat clauses (fact sheet miles.md 8a, OA-01…OA-18). SPEC.md repeats them."""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# OA-01
_must(
    "openai.models.list",
    'GET /models answers 200 {"object": "list", "data": [...]} whose entries have a string id and object "model", '
    "and a chat naming a listed id is accepted.",
)
# OA-02, OA-03
_must(
    "openai.chat.shape",
    'A minimal chat answers 200 application/json with object "chat.completion", a non-empty string id, an integer '
    'created, a model, and choices[0] with index 0, message.role "assistant" and a finish_reason.',
)
_must(
    "openai.chat.finish-reason",
    "Every finish_reason is one of stop, length, tool_calls, content_filter or function_call.",
)
_must(
    "openai.limits.max-tokens",
    "With max_tokens 1 on a prompt that needs more, the reply stops with finish_reason length.",
)
# OA-04
_must(
    "openai.usage.consistent",
    "usage holds non-negative integers prompt_tokens, completion_tokens and total_tokens, and total_tokens is their "
    "sum.",
)
_must("openai.usage.within-max-tokens", "usage.completion_tokens never exceeds the max_tokens the request set.")
_should("openai.usage.prompt-stable", "The same prompt is counted as the same prompt_tokens every time.")
# OA-05, OA-06 and fact sheet 8c.14
_must(
    "openai.tools.call-shape",
    'A prompt that needs an offered tool gets finish_reason "tool_calls" ("stop" too where tool_choice named the '
    "function, as OpenAI's API answers a forced call) and calls with unique non-empty ids (in a "
    'stream: one id per call index, no two indices sharing one), type "function", the name of an offered tool, and '
    "arguments that are a string holding a JSON object valid against the tool's schema. A reply cut at max_tokens "
    "(finish_reason length) or a refused request (a 4xx JSON error, held to openai.errors.shape) shows nothing of "
    "the shape: not judged.",
)
_must(
    "openai.tools.parallel",
    "A prompt that needs the same tool for two inputs, with parallel tool calls on, gets one call per input in one "
    "reply (not judged on a reply cut at max_tokens or a refused request).",
)
_must(
    "openai.tools.truncated-call",
    "A tool call cut short by max_tokens is reported with finish_reason length; a reply reported as a call made "
    "(tool_calls, or stop for a call forced by name) carries complete, valid JSON arguments, the same call as "
    "without the cap when the target is shown to repeat "
    "that call. Judged only where a call was made: a refusal, a stop without calls, or a length cut from a target "
    "not shown to make the call without the cap is not judged.",
)
_must(
    "openai.tools.round-trip",
    "Sending back the assistant's own tool-call message (content null) with one tool message per call, answered by "
    "tool_call_id in the order of the calls or in another order, answers 200 with an assistant message.",
)
_should(
    "openai.tools.result-by-id",
    "Tool results are paired with their calls by tool_call_id, not by position: a target shown to report each call's "
    "result beside the call's input, with the results sent in call order, reports the same pairs when they are sent "
    "in another order.",
)
_should("openai.tools.unknown-call-id", "A tool message whose tool_call_id matches no call is refused with a 4xx.")
# OA-07
_must(
    "openai.logprobs.content",
    "With logprobs true and top_logprobs k, choices[0].logprobs.content has one entry per generated token, each with "
    "a token, a finite logprob <= 0 and at most k top_logprobs in descending order.",
)
_should(
    "openai.logprobs.absent-unless-asked", "Without logprobs in the request, choices[0].logprobs is absent or null."
)
# OA-08
_should(
    "openai.determinism.repeat",
    "The same request at temperature 0 with a seed, repeated serially and under concurrent load, gives the same "
    "content, tool calls and token logprobs; the divergence rate is reported.",
)
_must(
    "openai.determinism.declared",
    "A target declared deterministic gives the same reply to every repeat of a temperature 0, seeded request.",
)
# OA-09, OA-10, OA-11
_must(
    "openai.stream.format",
    'stream true answers text/event-stream; every event is data: <json> with object "chat.completion.chunk" and '
    "the same id and created; the first delta has role assistant; one chunk has a finish_reason; the stream "
    "ends with data: [DONE] and nothing after it. A stream request refused with a 4xx JSON error is no stream and "
    "not judged, unless the same request without stream was answered 200.",
)
_must(
    "openai.stream.equivalent",
    "The content deltas concatenated and the tool-call fragments merged by index give the non-streamed reply to the "
    "same temperature 0, seeded request (tool-call ids aside).",
)
_should(
    "openai.stream.usage-chunk",
    "With stream_options.include_usage one last chunk has choices [] and a usage object and earlier chunks no usage; "
    "in a stream without it no chunk carries usage.",
)
# OA-12, OA-13
_must(
    "openai.errors.rejects-invalid",
    "Malformed JSON, a missing messages, an unknown role, temperature outside [0, 2], top_logprobs above 20 and n "
    "below 1 are each answered with a 4xx JSON error: never a 5xx, never a non-JSON body, and a 200 only where the "
    "profile says the target is lenient (never for malformed JSON; a 200 to an unknown role is judged by "
    "openai.messages.unknown-role).",
)
_should(
    "openai.messages.unknown-role",
    "A message whose role is none of system, developer, user, assistant, tool or function is refused with a 4xx JSON "
    "error, not answered as if the role were one the protocol defines.",
)
_should("openai.errors.status-400", "Invalid requests are refused with 400 rather than 422 or another 4xx.")
_must(
    "openai.errors.shape",
    "Every 4xx body, whatever request it answers (an invalid one, a missing or wrong key, a refused tool or stream "
    'request), is the OpenAI error object {"error": {"message": str, "type": str, "param", "code"}} whose type names '
    'a kind of error (not a null written as text: "None", "null", ""), or, for a target whose profile says so, '
    'miles\' {"error": "<string>"}.',
)
_should("openai.errors.unknown-model", "A model id the target does not serve is refused with a 4xx JSON error.")
_should("openai.auth.required", "With auth on, a request without the key or with a wrong key gets a 401 JSON error.")
# OA-14
_must(
    "openai.concurrency.parallel",
    "Parallel distinct requests all succeed with unique ids, and each reply answers its own request: it never "
    "carries another request's nonce.",
)
_info("openai.concurrency.latency", "p50 and p95 latency of the parallel requests.")
# OA-15 .. OA-18
_should(
    "openai.limits.context-overflow",
    'A prompt longer than the context window gets a 4xx JSON error or finish_reason "length"; never a hang or a 5xx.',
)
_should(
    "openai.http.hygiene",
    "Replies carry one content-type, at most one server and one date header, and a content-length equal to the body "
    "(or chunked encoding).",
)
_should("openai.chat.n-choices", "n 2 gives two choices with indices 0 and 1, or a clear 4xx JSON error.")
_should(
    "openai.unicode.round-trip",
    "UTF-8 text (accents, CJK, emoji) that a target shown to repeat the prompt is asked to repeat comes back "
    "exactly, in JSON and in SSE: no replacement characters (what a target that does not repeat writes is its own).",
)
