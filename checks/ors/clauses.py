"""The ORS clauses (fact sheet ors.md section 11). SPEC.md repeats them under the spec's page names.

The spec has no RFC 2119 words: MUST is only where its text says required or
always, or states the wire shape every client parses; where the spec's example
and both real servers disagree, both forms pass and which one is recorded as INFO.
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# HTTP API > Discovery
_info("ors.health.ok", 'GET /health answers 200 {"status": "ok"}.')
_must("ors.discovery.list-envs", "GET /list_environments answers a non-empty JSON array of environment names.")
_must(
    "ors.discovery.env-name-usable",
    "Every listed name works as {env_name}: GET /{env}/tools and /{env}/splits answer 200 without a redirect.",
)
_should(
    "ors.discovery.unknown-env",
    "GET /{env}/tools for an unknown env is refused with 404 or redirected (3xx); never a 2xx or a 5xx.",
)
_must(
    "ors.tools.shape",
    'GET /{env}/tools answers {"tools": [...]}, each ToolSpec with a string name, a string description and an '
    "input_schema key that is null or a JSON Schema object.",
)
_must(
    "ors.splits.shape",
    "GET /{env}/splits answers an array of {name, type} with type train, validation or test.",
)
_must("ors.tasks.shape", 'POST /{env}/tasks {"split": s} answers {"tasks": [object...], "env_name": str}.')
_must(
    "ors.tasks.invalid-split",
    "POST /{env}/tasks with a split the env does not declare is refused with a 4xx (the spec shows 400), never a 5xx.",
)
_should(
    "ors.tasks.index-api-consistent",
    "The index API agrees with the task list: num_tasks is len(tasks), task(i) is tasks[i], task_range(a, b) is "
    "tasks[a:b]; without /tasks, task(i) answers for every i below num_tasks and task_range(0, k) is task(0) to "
    "task(k - 1).",
)
_should("ors.tasks.index-out-of-range", "POST /{env}/task with index = num_tasks is refused with a 4xx.")
_info("ors.version.none", "GET /version (not in the spec) is recorded: only openreward answers it.")

# HTTP API > Sessions; Sessions > 1-5
_must(
    "ors.session.create-session",
    'POST /create_session answers a session id: JSON {"sid": str}, or an SSE stream whose task_id event carries it.',
)
_info("ors.session.create-session-form", "Which form /create_session answers in: JSON (the spec's example) or SSE.")
_must("ors.session.create-session-unique", "Every POST /create_session answers a different id.")
_must(
    "ors.session.create",
    'POST /create {"split": s, "index": i} with a new X-Session-ID answers 200 {"sid": <the same id>}.',
)
_must(
    "ors.session.create-exactly-one-source",
    "POST /create with both task_spec and split+index, or with neither, is refused with a 4xx.",
)
_should("ors.session.create-duplicate", "A second POST /create on a live session id is refused with a 4xx.")
_info("ors.session.client-minted-sid", "Whether /create accepts a session id the server never issued.")
_must(
    "ors.session.id-header",
    "Every session route (/create, /{env}/prompt, /{env}/call, /ping, /delete) without X-Session-ID is refused "
    "with a 4xx.",
)
_must(
    "ors.session.unknown-sid",
    "/{env}/prompt, /ping and /{env}/call with an id that was never created are refused with a 4xx.",
)
_must(
    "ors.session.setup-blocking",
    "A request straight after /create waits for setup: /{env}/prompt answers 200, or 503 with Retry-After.",
)
_must(
    "ors.prompt.blocks",
    'GET /{env}/prompt answers an array of blocks, each {"type": "text", "text": str} or '
    '{"type": "image", "data": str, "mimeType": str}.',
)
_must("ors.ping.ok", 'POST /ping on a live session answers 200 {"status": "ok"}.')
_must(
    "ors.delete.teardown", "After POST /delete, /{env}/prompt, /ping and /{env}/call on that id are refused with a 4xx."
)
_should("ors.delete.idempotent", "POST /delete again, or on an unknown id, never answers a 5xx.")
_should("ors.delete-session.ok", "POST /delete_session answers 2xx (404: a server of the older spec, recorded).")

# Server-Sent Events > Request, Response Stream, Event Types, Reconnection
_must(
    "ors.call.sse-content-type",
    "POST /{env}/call answers text/event-stream whatever Accept says (here Accept: application/json).",
)
_must("ors.call.first-event-task-id", "The first event of a call stream is task_id with a non-empty id.")
_must(
    "ors.call.terminal-event",
    "A call stream has exactly one terminal event, end or error, and nothing after it.",
)
_must(
    "ors.call.chunk-reassembly",
    "A chunked result (chunk events, then end) joins, chunk data then end data, into one JSON RunToolOutput.",
)
_must(
    "ors.call.result-envelope",
    'The end data is {"ok": true, "output": ToolOutput} or {"ok": false, "error": str}.',
)
_must(
    "ors.call.tooloutput-shape",
    "A ToolOutput has blocks (an array of blocks) and finished (a boolean); metadata is an object or null.",
)
_must("ors.call.reward-number", "A ToolOutput's reward is a finite number or null (no string, no NaN).")
_should(
    "ors.call.unknown-tool",
    'A call to a tool the env does not have is refused: an end event with {"ok": false}, or a 4xx; never ok:true '
    "or a 5xx.",
)
_should(
    "ors.call.bad-input",
    'A call whose input breaks the tool\'s input_schema is refused ({"ok": false} or a 4xx), not run, never a 5xx.',
)
_must("ors.call.missing-input", "A /call body without input is refused with a 4xx.")
_should(
    "ors.call.resume",
    "Re-POSTing a call with its task_id (after a cut stream, or after its end) answers that call's result again, "
    "the same bytes, without running the tool again; every call gets a task_id of its own.",
)
_info("ors.call.unknown-task-id", "What a fresh call carrying a task_id the server never issued answers.")
_should(
    "ors.call.error-event",
    "A tool that raises ends its stream with an error event (or an end with ok:false), not a cut stream or a 5xx.",
)

# Sessions > 5 Episode Termination; Data Types > ToolOutput
_should(
    "ors.finished.after-finished",
    "After a call answers finished: true, a further call is refused or carries no reward: a second reward is a "
    "double grade.",
)

# Implementing a Server > Error Handling
_should("ors.errors.json-detail", 'Every 4xx and 5xx answer is a JSON object with a "detail" key.')
_should(
    "ors.errors.malformed-body", "A /create or /{env}/tasks body that is not JSON is refused with a 4xx, not a 5xx."
)
_info("ors.body.unknown-keys", "Whether an unknown key in a /{env}/tasks body is refused (both real servers: 422).")

# Overview > Session Timeout; Server-Sent Events > Why SSE (slow, opt-in)
_should(
    "ors.call.keepalive",
    "While a slow tool runs, the stream sends a byte (a comment or an event) at least every keepalive_gap seconds.",
)
_should(
    "ors.session.idle-expiry",
    "A session idle for longer than idle_expiry seconds is gone (/ping refused); one idle for half of it is not.",
)
_must("ors.ping.keeps-alive", "A session pinged every ping_every seconds outlives idle_expiry.")
