"""Every clause the rllink-client suite decides: stable id, level and one-line statement.

RLlink has no written spec; the clauses follow the fact sheet's client
clauses (C-CONNECT ... C-DISCONNECT), and levels follow SPEC.md's verdict
rule: MUST for what the message definitions state or every server depends
on, SHOULD for the documented workflow RLlib does not enforce, INFO where a
conforming client may go either way.
SPEC.md repeats each line word for word; a test holds the two together.
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# C-CONNECT
_must(
    "rllink-client.connect.speaks",
    "The client connects to the announced address and sends its first frame within the timeout, without waiting "
    "for the server to speak (the server never sends anything unsolicited).",
)
_info(
    "rllink-client.connect.retries",
    "After the server closes the connection and stops listening for `recycle` seconds (as RLlib does), the client "
    "connects again once listening resumes.",
)
_info("rllink-client.dialect", "The dialect the client speaks: json (Ray 2.41-2.48) or msgpack (Ray 2.49 on).")

# C-HANDSHAKE
_should("rllink-client.handshake.ping-first", "The first message on every connection is a PING.")
_must(
    "rllink-client.handshake.config-state-first",
    "On every connection the client sends GET_CONFIG and GET_STATE and receives SET_CONFIG and SET_STATE before it "
    "sends any episodes.",
)

# C-FRAME
_must(
    "rllink-client.frame.header",
    "Every client frame starts with exactly 8 ASCII digits equal to the body's byte length, and the body is one "
    "JSON object (json) or msgpack map (msgpack), in the connection's dialect, with no trailing bytes.",
)
_must(
    "rllink-client.frame.type",
    "Every client message has a str `type` naming a client request: PING, GET_CONFIG, GET_STATE, EPISODES or "
    "EPISODES_AND_GET_STATE (case-sensitive; never a server-side type).",
)

# C-REQ-RESP
_must(
    "rllink-client.req-resp.waits",
    "After PING, GET_CONFIG, GET_STATE or EPISODES_AND_GET_STATE the client sends nothing until the reply has "
    "arrived (force_on_policy).",
)
_must(
    "rllink-client.req-resp.episodes-no-reply",
    "After a bare EPISODES the client goes on without waiting for a reply (the server sends none).",
)

# C-BATCH-SIZE
_must(
    "rllink-client.batch.size",
    "The env steps (actions) sent since the last SET_STATE, counted at each EPISODES_AND_GET_STATE, equal the "
    "advertised fragment length: env_steps_per_sample (json) or the config's rollout_fragment_length (msgpack).",
)
_should(
    "rllink-client.batch.timesteps",
    "EPISODES_AND_GET_STATE carries `timesteps`, equal to the batch's env steps (RLlib's client sends it; the "
    "server ignores it).",
)

# C-EPISODE-SHAPE and C-REQUIRED-FIELDS
_must(
    "rllink-client.episode.fields",
    "Every episode carries the keys the server reads: obs, actions, rewards, action_dist_inputs, action_logp, "
    "is_terminated, is_truncated (json); SingleAgentEpisode.get_state() keys with data buffers and both "
    "extra_model_outputs (msgpack).",
)
_must(
    "rllink-client.episode.shape",
    "Per chunk len(obs) = len(actions) + 1 = len(rewards) + 1, every model output has len(actions) items, "
    "len(infos) = len(obs) (msgpack); is_terminated and is_truncated are bools, not both true.",
)

# C-VALUE-DOMAIN
_must(
    "rllink-client.values.spaces",
    "Observations have the declared shape and are finite numbers, actions are integers in [0, n) of the Discrete "
    "space, rewards are finite.",
)
_must(
    "rllink-client.values.logp",
    "action_logp is <= 0 and equals log softmax(action_dist_inputs)[action] within tolerance.",
)

# C-ONPOLICY-WEIGHTS
_must(
    "rllink-client.onpolicy.weights",
    "The action_dist_inputs of each batch equal the checker's own forward pass, on the reported observations, of "
    "the weights in the last SET_STATE sent before the batch began.",
)

# C-CHUNK-CONTINUITY
_must(
    "rllink-client.chunk.continuity",
    "The next chunk of an episode cut at a batch boundary keeps its id_, starts at t_started equal to the previous "
    "chunk's t and with the previous chunk's last observation; an ended episode is never continued (msgpack).",
)

# C-DISCONNECT
_info(
    "rllink-client.disconnect.handles-close",
    "When the server closes the connection, the client reconnects and repeats the handshake, or exits.",
)
