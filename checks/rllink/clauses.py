"""Every clause the rllink suite decides: stable id, level and one-line statement.

RLlink has no written spec; the sections follow the fact sheet's server
clauses (S-LISTEN ... S-LENIENT-HEADER), and levels follow SPEC.md's verdict
rule: MUST for what the message definitions state or every client depends
on, SHOULD for robustness and strict +1 sequences, INFO for leniency.
SPEC.md repeats each line word for word; a test holds the two together.
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

_must(
    "rllink.listen.accepts",
    "The server accepts a TCP connection and answers a PING sent right away within the timeout.",
)
_must(
    "rllink.frame.header",
    "Every server frame starts with exactly 8 ASCII digits equal to the body's byte length, and the body decodes "
    "completely with no trailing bytes.",
)
_must(
    "rllink.body.form",
    "Every server body is one JSON object (json dialect) or msgpack map (msgpack dialect) whose `type` is a str "
    "naming a reply type: PONG, SET_CONFIG or SET_STATE.",
)
_must("rllink.ping.pong", "A PING, sent at any point of a connection, gets exactly one PONG.")
_must(
    "rllink.config.set-config",
    "GET_CONFIG gets one SET_CONFIG: an int env_steps_per_sample >= 1 and a bool force_on_policy (json), or a bin "
    "`config` (msgpack).",
)
_info(
    "rllink.config.pickle",
    "The msgpack SET_CONFIG's pickled config: its size and the fragment length read from its opcodes, never executed.",
)
_must(
    "rllink.state.shape",
    "GET_STATE gets one SET_STATE with an int weights_seq_no >= 0 and usable weights: an onnx_file that "
    "base64-decodes, gunzips, loads in onnxruntime and maps a [1, obs_dim] float32 input to the action space's "
    "logits (json), or a non-empty state.rl_module of well-formed msgpack-numpy arrays (msgpack).",
)
_must("rllink.episodes.no-reply", "A bare EPISODES gets no reply: the next frame is the PONG of a following PING.")
_must(
    "rllink.order.pipelined",
    "Replies arrive in request order, one per reply-bearing request, when requests are pipelined.",
)
_must(
    "rllink.liveness.on-policy",
    "An EPISODES_AND_GET_STATE carrying exactly the advertised step count gets its SET_STATE within the timeout.",
)
_must(
    "rllink.seq.monotonic",
    "weights_seq_no never decreases, on a connection or across reconnects, and rises by at least K-1 over K full "
    "on-policy batches.",
)
_should(
    "rllink.seq.strict",
    "weights_seq_no rises by exactly 1 per full on-policy batch (RLlib's stale-state race may repeat one).",
)
_should(
    "rllink.malformed.recovery",
    "After a malformed frame (bad header, undecodable body, no or unknown `type`) the server closes the connection "
    "and serves a fresh one after its back-off, or keeps answering on the same connection; it neither hangs nor dies.",
)
_should(
    "rllink.payload.robustness",
    "After a semantically bad EPISODES or a short on-policy batch the server recovers (closes and serves a fresh "
    "connection, or keeps answering PING); it is neither wedged nor dead.",
)
_should(
    "rllink.client.second",
    "A second client connecting while one is served is refused or served, never left without an answer; once the "
    "first leaves, a new client is served.",
)
_info("rllink.types.ignored", "What the server does with valid but unhandled type names (old-stack and server-side).")
_info("rllink.header.lenient", "Whether the server accepts headers that only Python's int() reads, such as '     +11'.")
