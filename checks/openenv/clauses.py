"""The OpenEnv env-server clauses. Ids name the fact sheet's clause group; SPEC.md repeats them."""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# 3.1 discovery, 3.2 mode
_must("openenv.discover.health", 'GET /health answers 200 with a JSON object whose status is "healthy".')
_must(
    "openenv.discover.metadata",
    ("GET /metadata answers 200 with a JSON object holding a string name and a string description."),
)
_must(
    "openenv.discover.schema",
    (
        "GET /schema answers 200 with a JSON object whose action, observation and state members are JSON "
        "schemas (objects)."
    ),
)
_should(
    "openenv.discover.openapi",
    ("GET /openapi.json answers 200 with an OpenAPI document carrying a string info.version."),
)
_info(
    "openenv.discover.profile",
    (
        "The protocol profile and code line the server shows: OpenAPI info.version and the markers of "
        "openenv 0.10 and later."
    ),
)
_must(
    "openenv.mode.consistent",
    (
        "The OpenAPI paths list /reset, /step and /state all together (simulation mode) or none of them "
        "(production mode)."
    ),
)

# 3.3 handshake, 3.4 envelope, 3.5 reward, 3.6 order
_must(
    "openenv.ws.handshake",
    (
        "GET /ws upgrades to a WebSocket without any subprotocol or credentials, and the server answers "
        "in JSON text frames."
    ),
)
_must(
    "openenv.ws.envelope",
    (
        'Every reply to reset or step is {"type": "observation", "data": {...}} where data.observation is'
        " an object, data.done a JSON boolean, data.reward is present, and data holds no other key but "
        "metadata."
    ),
)
_must(
    "openenv.ws.reward",
    (
        "Every reward the server sends, on reset or step and in every phase, is null (the reward is optional), "
        "a boolean or a finite JSON number, never a string or another value."
    ),
)
_should(
    "openenv.ws.reward-number",
    (
        "A reward is sent as a JSON number or null, not as a JSON boolean: HTTP /step turns the same boolean "
        "into a number, so the two transports disagree."
    ),
)
_should(
    "openenv.ws.metadata-mirror",
    (
        "When an observation frame carries metadata both at the top of data and inside data.observation "
        "(OpenEnv 0.10 mirrors it), the two are equal."
    ),
)
_should(
    "openenv.ws.reward-range",
    (
        "When the target declares a reward range (`reward_range`), every step reward seen in the run "
        "lies inside it. Without one it is `info` with the range of step rewards seen: nothing on the "
        "wire declares a range, and OpenEnv's own envs document negative rewards."
    ),
)
_must(
    "openenv.ws.order",
    (
        "The server sends exactly one reply per reset, step or state message, in the order the messages "
        "were sent, also when they are pipelined."
    ),
)
_must(
    "openenv.ws.reply-in-time",
    (
        "Every message that calls for a reply (reset, step, state, and a malformed or unknown one) is "
        "answered within the target's step timeout."
    ),
)
_must(
    "openenv.ws.unprompted",
    (
        "Nothing arrives on /ws unasked: no frame before the first message and none beyond the replies, "
        "except a CAPACITY_REACHED, FACTORY_ERROR or SESSION_ERROR error right before the server closes."
    ),
)

# 3.7 state
_must(
    "openenv.state.shape",
    (
        '{"type": "state"} is answered with {"type": "state", "data": {...}} holding an integer '
        "step_count of at least 0."
    ),
)
_must("openenv.state.episode-id", "After a reset carrying episode_id E, the state reports episode_id E.")
_must("openenv.state.step-count", ("step_count is 0 right after a reset and counts the accepted steps since it."))

# 3.8 action rejection
_must(
    "openenv.action.rejected",
    (
        'A step whose action breaks /schema.action is answered with {"type": "error"} whose data has code'
        " VALIDATION_ERROR, a string message and a list of errors."
    ),
)
_must("openenv.action.not-executed", ("A rejected action never reaches the environment: step_count does not change."))
_must("openenv.action.session-usable", "After a rejected action the same session still accepts a valid step.")

# 3.9 schema agreement
_must(
    "openenv.schema.action-accepted",
    (
        "Every action that validates against /schema.action is accepted (answered with an observation, "
        "never VALIDATION_ERROR)."
    ),
)
_must(
    "openenv.schema.observation-valid",
    (
        "Every observation sent, merged with its done and reward, validates against /schema.observation; a "
        "reset observation validates against /schema.reset_observation when /schema publishes one."
    ),
)
_must(
    "openenv.replay.expected-reward",
    (
        "When the target declares the reward of its scripted episode, every run of that episode ends done"
        " with exactly that reward."
    ),
)

# 3.10 recoverable errors
_must(
    "openenv.errors.invalid-json",
    ("A text frame that is not JSON is answered with error code INVALID_JSON and the session stays usable."),
)
_must(
    "openenv.errors.unknown-type",
    (
        "A message with an unknown or missing type is answered with error code UNKNOWN_TYPE and the "
        "session stays usable."
    ),
)
_must(
    "openenv.errors.execution",
    (
        "An exception raised inside the environment is answered with error code EXECUTION_ERROR and the "
        "session stays usable."
    ),
)
_must(
    "openenv.errors.codes",
    ("Every error frame carries a string message and a code from the seven OpenEnv error codes."),
)

# 3.11 survival of hostile input
_must(
    "openenv.survive.hostile",
    (
        "After non-object JSON, binary frames, an oversized frame, abrupt disconnects and a burst of bad "
        "sessions, the process still answers /health as it did before and a live session keeps working."
    ),
)
_should(
    "openenv.survive.clean-end",
    (
        "A session ended because of hostile input gets an error frame (SESSION_ERROR) and a close with "
        "code 1000, or stays usable."
    ),
)

# 3.12 close
_must("openenv.close.clean", '{"type": "close"} is answered by no frame and a server close with code 1000.')
_must(
    "openenv.close.frees-slot",
    (
        "Ending a session by a close message, a WebSocket close or a dropped connection frees its slot "
        "for a new session."
    ),
)

# 3.13 capacity
_info(
    "openenv.capacity.probed",
    ("How many concurrent sessions the server accepted when probed up to the group size plus one."),
)
_must(
    "openenv.capacity.group",
    (
        "When the target declares a group size, the server accepts that many concurrent sessions. Without "
        "one it is not judged: the group runs within the capacity the server shows."
    ),
)
_must(
    "openenv.capacity.reached",
    (
        "The session beyond capacity gets one CAPACITY_REACHED error carrying integer active_sessions and"
        " max_sessions, is then closed, and the sessions already open keep working."
    ),
)

# 3.14 isolation, 3.15 determinism
_must(
    "openenv.isolation.sessions",
    (
        "Parallel sessions driven with different reset data and actions each see exactly what the same "
        "sequence sees when run alone: the same episode id where the env adopts the one sent, the same step "
        "count after as many steps, and the same frames where episodes must repeat."
    ),
)
_must(
    "openenv.determinism.sequential",
    (
        "Where episodes must repeat (declared deterministic, or a seed shown applied), the same reset "
        "data and actions, run in sessions one after another, give identical observation, reward and "
        "done frames."
    ),
)
_must(
    "openenv.determinism.group",
    (
        "Where episodes must repeat, a group of identical sessions run in parallel (a GRPO group) gives "
        "identical frames and rewards in every session."
    ),
)

# 3.16 reset parameters
_must(
    "openenv.reset.task-id",
    ("Resets with two different task ids give different first observations: the task_id is not silently dropped."),
)
_must(
    "openenv.reset.seed",
    (
        "When the target's reset data sets a seed and the env is shown to depend on it (the target declares "
        "seed_dependent, or unseeded episodes of the run differ), some other seed changes what the episode "
        "shows: the seed is not silently dropped. Otherwise it is not judged."
    ),
)
_must(
    "openenv.reset.seed-replay",
    (
        "When the target's reset data sets a seed that the run shows applied in fresh sessions (or the "
        "env is declared deterministic), resetting again in the same session with that seed, or with "
        "seed 0, replays the same episode: the seed is applied on every reset."
    ),
)

# production mode (OpenEnv 0.10's OPENENV_MODE=production) and WS /harness
_should(
    "openenv.production.http-absent",
    (
        "In production mode (the OpenAPI paths list none of /reset, /step and /state) POST /reset, POST /step "
        "and GET /state answer 404: HTTP offers no simulation control."
    ),
)
_info(
    "openenv.production.ws-episodes",
    "What /ws does in production mode: OpenEnv 0.10 still serves reset, step and state episodes there.",
)
_should(
    "openenv.production.harness",
    (
        "A WebSocket handshake on /harness is refused with an HTTP 4xx (OpenEnv: 403) by a server that serves "
        'no harness; one it accepts starts a harness session, {"type": "session_started"} first.'
    ),
)

# 3.17 termination
_must(
    "openenv.termination.within-budget",
    (
        "When the target declares a maximum number of steps (max_steps) and not endless episodes, the "
        "scripted episode reaches done true within it. Nothing on the wire promises an end otherwise."
    ),
)
_info("openenv.termination.after-done", "What the server does with a step sent after done.")

# 3.18 HTTP in simulation mode, 3.19 MCP
_must(
    "openenv.http.reset",
    (
        "In simulation mode POST /reset answers 200 with a JSON object holding observation (an object), "
        "reward and a boolean done."
    ),
)
_must(
    "openenv.http.step",
    (
        "In simulation mode POST /step with a valid action answers 200 with a JSON object holding "
        "observation (an object), reward and a boolean done."
    ),
)
_must(
    "openenv.http.invalid-action",
    ("In simulation mode POST /step with an action that breaks /schema.action answers 422 with a detail list."),
)
_should(
    "openenv.http.metadata",
    (
        "When the wire shows openenv 0.10 (a /list_environments path or /schema.reset_observation), the "
        "POST /reset and /step answers carry a top-level metadata key: null when the observation's metadata "
        "is empty, else the same object."
    ),
)
_info(
    "openenv.http.crash-response",
    ("What POST /step answers when the environment raises (OpenEnv 0.3.0 sends a plain-text 500)."),
)
_must(
    "openenv.mcp.error-object",
    (
        "POST /mcp answers a body that is not a JSON-RPC 2.0 request (unparsable JSON, an empty object) with "
        'a JSON-RPC 2.0 error response: no server error, a JSON object with jsonrpc "2.0" and an error object '
        "holding an integer code and a string message."
    ),
)
_should(
    "openenv.mcp.error-code",
    (
        "That error response comes with HTTP 200 and id null, and carries code -32700 for unparsable JSON "
        "and -32600 for an invalid request."
    ),
)
CATALOGUE.alias("openenv.mcp.jsonrpc", "openenv.mcp.error-object")
_should(
    "openenv.mcp.missing-name",
    (
        "POST /mcp tools/call without a tool name is answered with JSON-RPC error -32602 (invalid params); "
        "another code is judged only on an env whose tools/list lists tools."
    ),
)
_should(
    "openenv.mcp.input-schema",
    (
        "Every tool POST /mcp tools/list returns carries its arguments' JSON schema under MCP's name "
        "inputSchema (not input_schema)."
    ),
)

# 3.22 /ws attached to an HTTP MCP session (OpenEnv 0.10)
_should(
    "openenv.attach.session",
    (
        "When the wire shows openenv 0.10 and POST /mcp openenv/session/create answers a session id, "
        "/ws?session_id=<id> attaches a socket to that session: a reset there answers an observation and a "
        "state request a state."
    ),
)
_should(
    "openenv.attach.unknown-id",
    "On such a server /ws?session_id= with an id no session has is answered with a SESSION_ERROR error frame.",
)
_should(
    "openenv.attach.single",
    "A second /ws?session_id= for a session that already has a socket attached gets a SESSION_ERROR error frame.",
)
_should(
    "openenv.attach.close",
    (
        'Once its socket is gone, openenv/session/close of the HTTP session answers {"closed": true} (or '
        "-32602 when the session already ended), and its slot is free: a new /ws session resets."
    ),
)

# 3.21 the task API (OpenEnv 0.10)
_should(
    "openenv.tasks.consistent",
    (
        "When the server serves the task API (/list_environments and /{env}/splits, not 501), /{env}/splits "
        "is an array of {name} objects and the routes agree on its first split: num_tasks counts what tasks "
        "lists, task 0 and the last task are its first and last, task_range 0..3 is its first three, and "
        "none answers a server error."
    ),
)
_should(
    "openenv.tasks.reset",
    ("A task the task API lists resets over /ws when its split and index are sent as reset data."),
)

# 3.20 latency
_info(
    "openenv.latency.figures",
    ("The reset plus step round trip on one socket and the p99 step round trip while the group runs in parallel."),
)
_must(
    "openenv.latency.bound",
    (
        "When the target sets a latency bound, the single-socket round trip and the p99 under the "
        "parallel group stay within it."
    ),
)
_should(
    "openenv.concurrency.overlap",
    (
        "When the server accepts the group and one step takes at least 20 ms, the same step sent at once on "
        "every session of the group finishes in under 80% of the time the steps take one after another."
    ),
)
