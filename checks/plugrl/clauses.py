"""Every clause the plugrl-server suite decides: stable id, level and one-line statement.

The numbers are the sections of the PlugRL wire protocol's SPEC (version 1).
SPEC.md repeats each line word for word; a test holds the two together.
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_must, _should, _info = CATALOGUE.must, CATALOGUE.should, CATALOGUE.info

# 1 Layers and 1.1 connection options
_must("plugrl.1.websocket-handshake", "The server completes a WebSocket handshake on its ws:// address.")
_must("plugrl.1.1.no-compression", "The server declines permessage-deflate when a client offers it.")
_must("plugrl.1.1.large-frame", "The server accepts a frame larger than 1 MiB from a client.")

# 2 Envelope, 3 values and arrays
_must("plugrl.2.binary-frames", "Every frame the server sends is binary, never text.")
_must("plugrl.2.msgpack-map", "Every frame the server sends is one msgpack map, with no extension types.")
_must(
    "plugrl.3.2.ndarray-form",
    "Arrays the server sends use bin keys __ndarray__, data, dtype and shape, a permitted typestr, "
    "and exactly prod(shape) x itemsize bytes of data.",
)

# 4 Sequence
_must("plugrl.4.1.metadata-once", "The server sends metadata once per connection and never again.")
_must("plugrl.4.2.keeps-open", "The server keeps a well-behaved connection open across repeated exchanges.")
_must(
    "plugrl.4.2.resync-double-infer",
    "Two infers in a row close the connection with 1001 plugrl-server-resync.",
)
_must("plugrl.4.3.feedback-set", "The server accepts a feedback whose env set differs from its infer's.")
_must("plugrl.4.3.env-ids-order", "The action's env_ids equal the infer's env_indices, in the same order.")
_must("plugrl.4.4.connection-scoped", "Env indices belong to one connection: two connections may both use index 0.")

# 5.1 metadata
_must(
    "plugrl.5.1.speaks-first",
    "The server speaks first on every connection: a metadata message whose data is a map, "
    "before the client sends anything.",
)
_must("plugrl.5.1.features-list", "The metadata's features, when sent, is a list of strings.")
_should("plugrl.5.1.declared-ints", "The metadata's action_horizon and action_dim, when sent, are positive integers.")
_must("plugrl.5.1.declared-horizon", "Every action's horizon H equals the metadata's action_horizon, when declared.")
_must("plugrl.5.1.declared-dim", "Every action's per-env width equals the metadata's action_dim, when declared.")

# 5.2 infer
_must("plugrl.5.2.ragged-batches", "The server answers infers whose number of envs n changes from one to the next.")

# 5.3 action
_must("plugrl.5.3.answered-with-action", "Every infer is answered, within the deadline, by an action message.")
_must("plugrl.5.3.action-array", "The action is an ndarray of at least two dimensions.")
_must("plugrl.5.3.action-numeric", "The action's dtype is an integer or float of any byte order and width.")
_must("plugrl.5.3.time-major", "The action is sent time-major, [H, n, *da].")
_must("plugrl.5.3.horizon-positive", "The action's horizon H is at least 1.")
_must("plugrl.5.3.env-ids-form", "The action's env_ids is an ndarray of dtype <i8 and shape [n].")
_must("plugrl.5.3.same-dtype", "Every action on a connection has the same dtype.")
_should("plugrl.5.3.same-shape", "Every action on a connection has the same horizon H and per-env shape da.")
_should("plugrl.5.3.finite-values", "Action values are finite: no NaN and no infinity.")
_must(
    "plugrl.5.3.rows-follow-envs",
    "Each env's slice action[:, i] answers that env's observation, whatever the batch "
    "(judged once the run shows each row following its env's observation).",
)

# 5.4 feedback
_must("plugrl.5.4.nested-info", "The server accepts a feedback whose info holds per-env episode arrays.")
_must(
    "plugrl.5.4.resync-unsplittable-info",
    "A feedback whose info cannot be split per env closes the connection with 1001 plugrl-server-resync.",
)

# 6 Batching across clients
_must(
    "plugrl.6.concurrent-clients",
    "The server serves connections side by side: one opened while another is open gets its metadata "
    "without waiting for the other to close.",
)

# 7 Closing
_must("plugrl.7.1.stop-close", "The server ends a run by closing with 1001 and reason plugrl-server-stop.")
_must(
    "plugrl.7.2.resync-malformed",
    "An infer missing env_indices or step_ids closes the connection with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.7.2.resync-wrong-type",
    "A message whose message_type is not the one expected closes the connection with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.7.2.resync-not-msgpack",
    "A binary frame that is not msgpack closes the connection with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.7.2.resync-bad-ndarray",
    "An ndarray whose data length disagrees with its shape closes the connection with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.7.2.bystander-survives",
    "A connection opened before another client's protocol error is still answered after it.",
)
_must(
    "plugrl.7.2.accepts-after-error",
    "After a client's protocol error the server accepts a new connection and sends it metadata.",
)
_must(
    "plugrl.7.3.late-feedback",
    "A feedback sent seconds after its action, well within the 60 s allowed, does not get the connection closed.",
)
_must(
    "plugrl.7.3.feedback-wait",
    "A connection that owes a feedback is kept open, and sent nothing, for at least nine tenths of the "
    "feedback timeout (60 s unless raised on both sides).",
)
_must(
    "plugrl.7.3.feedback-timeout-close",
    "A connection closed because its feedback never came is closed with 1001 and reason Feedback timeout.",
)
_should(
    "plugrl.7.3.feedback-timeout-enforced",
    "The server closes a connection whose feedback is overdue, within the feedback timeout plus one step deadline.",
)

# 10 Versioning and 10.1 reuse-feedback-obs
_must("plugrl.10.protocol-version", "The metadata's protocol_version, when sent, is 1.")
_info("plugrl.10.1.reuse-offered", "Whether the server lists the reuse-feedback-obs feature in its metadata.")
_must(
    "plugrl.10.1.reuse-answered", "A server listing reuse-feedback-obs answers an infer that reuses some observations."
)
_must(
    "plugrl.10.1.reuse-all-rows",
    "A server listing reuse-feedback-obs answers an infer that reuses every row (leading dimension 0).",
)
_must(
    "plugrl.10.1.reuse-after-terminal",
    "Reusing the observation of an env whose last feedback ended its episode closes with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.10.1.reuse-unknown-env",
    "Reusing the observation of an env never fed back on the connection closes with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.10.1.reuse-rows",
    "A reused row is answered as if that env's last fed-back observation had been sent "
    "(checked when the policy is deterministic).",
)
_must(
    "plugrl.10.1.reuse-malformed",
    "A reuse the server cannot answer correctly, a mask whose length is not n or observation rows that do not "
    "match its false entries, closes with 1001 plugrl-server-resync.",
)
_info(
    "plugrl.10.1.reuse-integer-mask",
    "Whether a server listing reuse-feedback-obs answers a reuse sent as a 0/1 integer array rather than |b1, "
    "or refuses it with a resync (both are conforming).",
)
_should(
    "plugrl.10.1.reuse-integer-mask-handled",
    "A server listing reuse-feedback-obs answers a reuse sent as a 0/1 integer array with an action or a "
    "1001 plugrl-server-resync close, never with another close (such as 1011), another frame or silence.",
)
_should(
    "plugrl.10.1.reuse-unoffered",
    "A server that does not list reuse-feedback-obs closes an infer carrying reuse with 1001 plugrl-server-resync.",
)
_must(
    "plugrl.10.1.reuse-connection-scoped",
    "Reusing an observation fed back only on another connection closes with 1001 plugrl-server-resync.",
)
