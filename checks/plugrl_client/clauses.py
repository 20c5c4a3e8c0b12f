"""Every clause the plugrl-client suite decides: stable id, level and one-line statement.

The numbers are the sections of the PlugRL wire protocol's SPEC (version 1);
section 8 is its client checklist and 8.1 the probe environment.
SPEC.md repeats each line word for word; a test holds the two together.
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# 8 item 1: connection options
_must("plugrl-client.1.1.no-compression", "The client does not offer permessage-deflate in its handshake.")
_must(
    "plugrl-client.1.1.large-frame",
    "The client accepts a frame larger than 1 MiB (a metadata message with a 2 MiB key) and goes on.",
)

# 8 item 2: metadata
_must("plugrl-client.5.1.metadata-first", "The client sends nothing before it has received the metadata.")
_must(
    "plugrl-client.5.1.unknown-keys",
    "The client ignores metadata keys it does not know: it goes on to send an infer.",
)

# 8 items 3 and 4: frames and arrays
_must("plugrl-client.2.binary-frames", "Every frame the client sends is binary, never text.")
_must(
    "plugrl-client.2.msgpack-map",
    "Every frame the client sends is one msgpack map with a str message_type, infer or feedback.",
)
_must(
    "plugrl-client.3.2.ndarray-form",
    "Arrays the client sends use bin keys __ndarray__, data, dtype and shape, a permitted typestr, "
    "and exactly prod(shape) x itemsize bytes of data.",
)
_info("plugrl-client.3.4.text-form", "Observation text is a numpy <U array, as plugrl-env-client sends it.")

# 8 item 5 and 4.2: alternation
_must(
    "plugrl-client.4.2.alternation",
    "Infer and feedback strictly alternate: never two infers or two feedbacks in a row.",
)
_must(
    "plugrl-client.8.one-feedback-per-action",
    "Exactly one feedback for every action: no env asks for a new chunk while it still holds one.",
)
_must("plugrl-client.4.3.feedback-envs-held", "A feedback names only envs that hold an action on this connection.")

# 5.2 and 5.4: message forms
_must(
    "plugrl-client.5.2.infer-form",
    "An infer carries data, env_indices (a one-dimensional integer array naming at least one env, "
    "each once) and step_ids of the same length.",
)
_must(
    "plugrl-client.5.2.observation-form",
    "An observation is a map of exactly images, states and text; images are uint8 [n, h, w, c]; "
    "every array shares the leading dimension n of its message.",
)
_must(
    "plugrl-client.5.4.feedback-form",
    "A feedback carries env_indices, step_ids and data with exactly obs, rewards (float [m]), "
    "terminated and truncated (bool [m]) and info (a map).",
)
_info("plugrl-client.5.4.rewards-float32", "Rewards are float32, as plugrl-env-client sends them.")

# 8 items 4, 7 and 8 on the probe environment (8.1)
_must("plugrl-client.8.1.probe-observation", "The probe observation carries states t [n, 1] and a [n, d], float64.")
_must(
    "plugrl-client.5.3.time-major",
    "The action chunk is read time-major [H, n, *da] from its typestr and applied in order, as sent.",
)
_must("plugrl-client.5.3.steps-within-horizon", "A client executes between 1 and H steps of a chunk.")
_must("plugrl-client.5.4.chunk-sum-reward", "A feedback's reward is the sum over the steps of the chunk.")
_must(
    "plugrl-client.5.4.terminal-observation",
    "A terminated step reports the observation that step returned, not the next episode's.",
)
_must(
    "plugrl-client.5.4.stops-at-terminal",
    "A chunk stops at the step that ends the episode; terminated is set there and only there; "
    "the probe env never truncates.",
)
_must(
    "plugrl-client.8.1.infer-continues",
    "An infer carries the observation the env's last feedback reported, or t = 0 after a terminal step "
    "and at the first episode.",
)
_info(
    "plugrl-client.5.3.reads-env-ids",
    "The client reads env_ids and tolerates a feedback env set unlike the infer's (not judged from the wire).",
)

# 8 items 9 and 10: closes
_should(
    "plugrl-client.7.1.no-reconnect-after-stop",
    "After 1001 plugrl-server-stop the client exits rather than reconnecting (unless configured to wait "
    "for the next run).",
)
_must("plugrl-client.7.2.reconnects-after-resync", "After 1001 plugrl-server-resync the client reconnects.")
_must(
    "plugrl-client.7.6.fresh-infer-after-reconnect",
    "A reconnecting client reads the fresh metadata and starts with an infer, dropping held feedback.",
)
_must(
    "plugrl-client.7.6.no-stale-feedback",
    "A client never sends feedback for an action that arrived on an earlier connection.",
)

# 8 item 11
_must("plugrl-client.7.4.text-fatal", "The client treats a text frame as fatal: it closes and sends nothing more.")

# 8 item 12: features
_must(
    "plugrl-client.10.1.reuse-only-offered",
    "The client sends reuse only when the server lists reuse-feedback-obs.",
)
_must(
    "plugrl-client.10.1.reuse-held-only",
    "A reuse mask is a bool [n] array, data holds the non-reused rows, and only observations the server "
    "holds are reused: never after a terminal feedback, nor before any feedback on the connection.",
)
_info("plugrl-client.10.1.reuse-used", "A client offered reuse-feedback-obs uses it.")
