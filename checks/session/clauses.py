"""The session-server clauses (fact sheet miles.md 8b, SS-01…SS-14 but SS-13), plus the openai-chat clauses
the suite checks through a session's proxy. SPEC.md repeats the session ones."""

from __future__ import annotations

from checks.core import Catalogue
from checks.openai.clauses import CATALOGUE as OPENAI_CATALOGUE

CATALOGUE = Catalogue()
_must = CATALOGUE.must

_must(
    "session.ss01.health",
    'GET /health answers 200 with a JSON object whose status is "ok"; a session_server_instance_id, when present, '
    "is 32 hex characters and the same on every call.",
)
_must(
    "session.ss02.create",
    'POST /sessions answers 200 {"session_id": <32 hex>}, ids are unique across creates, and a new session\'s GET '
    "lists no records.",
)
_must(
    "session.ss03.lifecycle",
    "DELETE of a session answers 204 with an empty body; afterwards GET, DELETE, chat and /samples on it, and any "
    'call on an unknown id, answer 404 with {"error": "session not found: ..."}.',
)
_must(
    "session.ss04.one-record-per-call",
    "After N successful chat calls that only extend the history, GET lists N records, each with path "
    "/v1/chat/completions, status_code 200 and request_timestamp <= timestamp, timestamps never decreasing; a "
    "streamed call is recorded like any other.",
)
_must(
    "session.ss05.record-matches-reply",
    "Each record holds what the agent saw: response.id equals the reply's id, the recorded message content and tool "
    "calls equal the reply's, and request.messages equals the messages the agent sent.",
)
_must(
    "session.ss06.tito",
    "From records alone: each turn's input_ids plus output ids is a prefix of the next turn's input_ids (within "
    "max_trim_tokens), len(output_token_logprobs) equals completion_tokens, accumulated_token_ids equals the last "
    "record's input plus output ids, and tito_session_mismatch holds no hard mismatch.",
)
_must(
    "session.ss07.forced-fields",
    "Every recorded request carries input_ids, logprobs true and return_meta_info true and no stream; a stream:true "
    "call answers SSE ending in [DONE] whose message equals the record's.",
)
_must(
    "session.ss08.failed-not-recorded",
    "A backend error (a prompt beyond the context window) is passed to the agent as a 4xx, adds no record, and the "
    "session stays usable: a different first turn is then answered 200 and recorded.",
)
_must(
    "session.ss09.retry-topology",
    "Under the retry schedule (initial, append_tool, append_user, append_tool, append_system, rollback, rollback, "
    "force_final, append_assistant) GET lists 7 records on the active path; v1 replaces the last record on a retry "
    "and refuses a divergence two generations deep with 400 leaving records unchanged; v2 grows the tree "
    "(0,-)(1,0)(2,1)(3,2)(4,3)(5,3)(6,3)(7,6)(8,7) with leaves 4, 5 and 8, root-to-leaf paths, records equal to the "
    "active path and each node's response_id equal to the reply id.",
)
_must(
    "session.ss10.truncation",
    'After a finish_reason "length" generation, v2 answers 409 to a request extending it and 200 to a branch '
    "before it; v1 answers 200 to both.",
)
_must(
    "session.ss11.concurrency",
    "Parallel sessions keep their own records (each holds only its own nonce); two concurrent chats from one parent "
    "both answer 200 and become two sibling nodes (v2) or one new record (v1); a DELETE while a chat is in flight "
    "answers 204, the chat never a 5xx, and the session is gone afterwards.",
)
_must(
    "session.ss12.samples",
    "POST /samples answers a safetensors blob with a rank-1 uint8 _samples_meta; tokens are int64, loss_mask uint8 "
    "and rollout_log_probs float64 of response_length entries, tokens end with the response, the logprobs under "
    "the loss mask equal the records' bit for bit, and empty_reason is no_records for a session without records "
    "and all_truncated for a max_seq_len shorter than the first prompt.",
)
_must(
    "session.ss14.tool-call-ids",
    "In the records, every tool message's tool_call_id names a call id of the preceding recorded assistant reply.",
)

# The openai-chat clauses, checked through a fresh session's /sessions/{id}/v1 proxy, as that suite states them.
for _clause in OPENAI_CATALOGUE:
    CATALOGUE.add(_clause.id, _clause.level, _clause.statement)
