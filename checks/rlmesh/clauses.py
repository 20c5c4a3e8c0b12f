"""The rlmesh clauses. Ids are keyed by the fact sheet's RM-* clause numbers.

Statements are repeated verbatim in SPEC.md under "RLMesh env service".
"""

from __future__ import annotations

from checks.core import Catalogue

CATALOGUE = Catalogue()
_c = CATALOGUE

# Handshake and contract (fact sheet 2.3, 2.4; RM-H1..H5, RM-O1)
_c.must(
    "rlmesh.h1.compatible",
    "A Handshake offering `rlmesh-wire-v1` is answered with `compatible=true` and an `env_contract`.",
)
_c.must("rlmesh.h1.num-envs", "The contract's `num_envs` is at least 1.")
_c.must(
    "rlmesh.h1.autoreset-mode",
    "The contract's `autoreset_mode` is NEXT_STEP or DISABLED (UNSPECIFIED is a defect, and wire-v1 reserves "
    "SAME_STEP).",
)
_c.must(
    "rlmesh.h1.spaces",
    "Both contract spaces are present and well-formed: a known kind and dtype, Box bounds of the right byte length "
    "with low <= high, Dict keys matching spaces, Discrete n > 0, MultiDiscrete nvec positive and matching the shape, "
    "Text 0 <= min <= max.",
)
_c.should("rlmesh.h1.peer-info", "The Handshake names the serving component in `peer_info.component`.")
_c.should(
    "rlmesh.h1.render-mode-declared",
    "A non-empty contract `render_mode` is one of the `render_modes` listed in the spec metadata.",
)
_c.must(
    "rlmesh.h2.generation-gate",
    "A Handshake offering another generation (`rlmesh-wire-v2`, or empty) gets `compatible=false`, a non-empty "
    "`error_message` and no `env_contract`, not a gRPC error.",
)
_c.must("rlmesh.h2.missing-base", "A Handshake with no `base` is refused with gRPC INVALID_ARGUMENT.")
_c.must(
    "rlmesh.h2.configure-edition",
    "A Join opened as the runtime opens it, with a ConfigureEnvRequest pinning a workflow edition the Handshake "
    "listed, gets a `configure` acknowledgement.",
)
_c.must(
    "rlmesh.h3.contract-stable",
    "Every Handshake, before and after Join sessions, returns a byte-identical `env_contract`.",
)
_c.info(
    "rlmesh.h5.unknown-fields",
    "Fields the checker's protos do not declare (such as handshake tag 6 or response tags 11-15) are tolerated and "
    "listed.",
)
_c.info(
    "rlmesh.o1.health",
    'The answer of the gRPC health service for service "" (UNIMPLEMENTED is normal for Python-hosted servers).',
)
_c.info("rlmesh.o1.handshake-latency", "The Handshake round-trip time.")

# Reset and step semantics (fact sheet 2.5, 2.7, 2.8; RM-V1, RM-V2, RM-S1..S3, RM-O1)
_c.must(
    "rlmesh.s1.answered",
    "A reset with valid seeds and a step with in-space actions are each answered with their own reset or step "
    "response, not an error.",
)
_c.must(
    "rlmesh.v2.obs-layout",
    "Every observation has one leaf per space leaf, each exactly dtype width x shape x lanes bytes (lanes: num_envs, "
    "or the subset or partial-reset count).",
)
_c.must(
    "rlmesh.v2.obs-in-space",
    "Every decoded observation lies in the observation space: inside Box bounds and not NaN, integers in their domain,"
    " MultiBinary 0 or 1, Text within its length and charset.",
)
_c.should(
    "rlmesh.v2.no-conformance-warning",
    "The server's infos carry no `rlmesh.conformance.warning` of kind `observation`.",
)
_c.must(
    "rlmesh.s1.step-shape",
    "A step response has one reward and one mask byte per stepped lane, mask bytes 0 or 1, and `env_indices` empty on "
    "a full-width step.",
)
_c.must("rlmesh.s1.reward-finite", "Every reward is finite.")
_c.must(
    "rlmesh.s2.episode-accounting",
    "Each lane that ends is reported once, in that step's `completed_episodes`, with its lane, the pushed episode id, "
    "its seed, its step count, its summed reward and the masks' terminated/truncated flags; no other completion is "
    "reported.",
)
_c.should(
    "rlmesh.s2.step-limit",
    "When the contract's spec metadata declares `max_episode_steps` (at its top level or under `spec`), an episode "
    "stepped one step past that limit has ended, terminated or truncated, by then (not judged when no limit is "
    "declared or no episode reaches it within the `step_budget` option).",
)
_c.must(
    "rlmesh.s3.autoreset",
    "The declared autoreset mode is honoured: under NEXT_STEP the step after a lane ends returns its new episode with "
    "reward 0 and both flags clear; under DISABLED an ended lane starts no new episode until it is reset.",
)
_c.should(
    "rlmesh.o1.step-latency",
    "The median step round-trip time stays within the `latency_bound_ms` option (recorded as information when no bound"
    " is set).",
)

# Seeding (fact sheet 4.7; RM-S4, RM-S5)
_c.must(
    "rlmesh.s4.seeded-replay",
    "Two resets with the same per-lane seed list, each followed by the same actions, give byte-identical observations,"
    " rewards and masks on every lane.",
)
_c.must(
    "rlmesh.s4.seed-all-lanes",
    "A single seed sent to a multi-lane endpoint either seeds every lane reproducibly or is rejected with an error; it"
    " never leaves lanes unseeded.",
)
_c.should(
    "rlmesh.s4.seed-chain",
    "A seeded reset followed by an unseeded reset repeats exactly, as gymnasium's seeding rule asks.",
)
_c.should("rlmesh.s4.seed-matters", "A different seed gives a different first observation on at least one lane.")
_c.should("rlmesh.s5.seed-length", "A reset with more seeds than lanes is rejected with a recoverable INVALID_ACTION.")

# Lanes (fact sheet 2.7, 4.5; RM-H4, RM-L1..L3)
_c.must(
    "rlmesh.h4.capability-honest",
    "With `subset_step` advertised a one-lane subset step succeeds and echoes `env_indices`; without it a subset step "
    "gets a recoverable UNSUPPORTED, never a silent full-width step.",
)
_c.must(
    "rlmesh.l1.subset-step",
    "A two-lane subset step returns two-lane observation, rewards and masks with `env_indices` echoed, each position "
    "belonging to the lane named there in whatever order they are named, and leaves the other lanes where they were.",
)
_c.must(
    "rlmesh.l1.partial-reset",
    "A partial reset of one lane with a seed returns only that lane's observation, equal to what a full reset gives "
    "that lane with the same seed.",
)
_c.must(
    "rlmesh.l2.lanes-overlap",
    "With `subset_step` advertised, steps on two lanes in flight at once overlap on the server: the pair finishes in "
    "under 80% of the two steps' time one after the other (judged when a lane step takes at least 20 ms).",
)
_c.should(
    "rlmesh.l3.lane-fifo",
    "Several steps pipelined for one lane are applied in arrival order: each response matches a sequential replay, "
    "in every one of repeated tries (a server may reorder only sometimes).",
)

# Errors (fact sheet 2.6, 2.9, 4.4; RM-V3, RM-E1, RM-E2, RM-E3, RM-E4, RM-E5)
_c.must(
    "rlmesh.v3.bad-action-rejected",
    "A malformed action (out of domain, NaN, wrong dtype width, extra or no leaves, absent, wrong batch width) is "
    "answered with a recoverable INVALID_ACTION carrying the request's id.",
)
_c.must(
    "rlmesh.v3.state-unchanged",
    "A rejected action leaves the env untouched: the next valid step gives the observation of a seeded replay without "
    "the bad action.",
)
_c.must(
    "rlmesh.l1.bad-index",
    "An out-of-range or duplicate lane index in a step or partial reset is a recoverable INVALID_ACTION (or "
    "UNSUPPORTED where subset steps are not offered).",
)
_c.must("rlmesh.e2.session-usable", "After a recoverable error the same stream answers the next valid request.")
_c.must(
    "rlmesh.e2.empty-request",
    "A JoinRequest with no arm set is answered with a recoverable UNSUPPORTED and the stream stays usable.",
)
_c.should(
    "rlmesh.e2.step-before-reset", "A step before any reset in a session is answered with a recoverable NOT_READY."
)
_c.must("rlmesh.e2.fatal-ends-stream", "A non-recoverable error is followed by the end of the Join stream.")
_c.must(
    "rlmesh.e3.timeout",
    "A step whose `timeout_ms` is shorter than the env's step time is answered with a recoverable TIMEOUT and the "
    "stream stays usable (judged when a step takes at least 20 ms).",
)
_c.must(
    "rlmesh.e4.single-session",
    "A second Join while one is active is refused with gRPC FAILED_PRECONDITION, and the first session is unaffected.",
)
_c.must(
    "rlmesh.e5.request-id-echo",
    "Every response echoes the id of exactly one outstanding request, and every request is answered unless a "
    "non-recoverable error ends the stream.",
)
_c.must(
    "rlmesh.e1.survives",
    "After the malformed probes the server still answers a Handshake and the first request of a new Join.",
)

# Render, close and shutdown (fact sheet 2.7, 2.10; RM-R1, RM-C1, RM-C2)
_c.must("rlmesh.r1.render-multi-lane", "A Render naming two lanes is a recoverable UNSUPPORTED.")
_c.must(
    "rlmesh.r1.render",
    "Render of lane 0 returns a frame whose format matches its bytes when `render_mode` is set, and no frame or a "
    "recoverable error when it is empty; it never ends the session.",
)
_c.should(
    "rlmesh.r1.render-bad-lane",
    "A Render of an out-of-range lane is a recoverable INVALID_ACTION, as a step or reset of that lane is.",
)
_c.must(
    "rlmesh.c1.close",
    "Close gets one `close` response listing every episode still active, and only those, each truncated with its id "
    "(a lane whose episode ended on an earlier step has none to list), and then the stream ends with status OK.",
)
_c.must(
    "rlmesh.c1.reopen",
    "After a Close the endpoint accepts a new session: its first request is answered, not refused or left hanging.",
)
_c.must(
    "rlmesh.c2.shutdown",
    "Shutdown is either refused (`accepted=false` with a message, and the endpoint keeps serving) or accepted, after "
    "which the endpoint stops answering within the step timeout.",
)
