"""What the hand-written rlmesh server (`handmade.py`) can be told to do wrong, legally odd, or hostile.

Each fault breaks exactly one thing (catalogue.py names the clause that must catch it); each
of VARIANTS is legal but unusual, and must pass everything.
"""

from __future__ import annotations

from checks.rlmesh.proto import spaces_pb2

FAULTS = {  # fault -> what the server does wrong (catalogue.py: the clause that must catch it)
    "any-generation": "compatible=true whatever generation is offered",
    "fatal-bad-action": "a bad action is a non-recoverable INTERNAL",
    "serial-lanes": "one lock for all lanes despite subset_step",
    "never-stops": "accepts Shutdown and keeps serving",
    "double-sessions": "serves a second concurrent Join",
    "wide-subset": "advertises subset_step, steps every lane",
    "unspecified-autoreset": "autoreset_mode UNSPECIFIED",
    "f64-obs": "float64 bytes for a float32 observation space",
    "off-by-one-steps": "completions count one step too many",
    "forgets-on-close": "Close reports no still-active episode",
    "wrong-echo": "error responses carry no request_id",
    "ignores-timeout": "a step's timeout_ms is ignored: the late step is answered",
    "answers-after-timeout": "TIMEOUT at the deadline, then the step's own late answer",
    "autoreset-reward": "NEXT_STEP, with a reward of 1 on each autoreset step",
    "lane-warnings": "an observation warning in a lane's `final_info` entry",
    "slot-leak": "a finished session never gives its slot back: every later Join is refused",
    "ignores-configure": "a ConfigureEnvRequest is answered as an unknown arm",
    "sorted-subset": "steps the named lanes in ascending order, whatever order was asked",
    "accepts-any-action": "out-of-range actions are clamped, not rejected",
    "big-endian-obs": "observations in big-endian byte order",
    "shared-rng": "all lanes draw their step noise from one generator",
    "join-ends-at-once": "every Join stream ends with OK before answering anything",
    "zero-lanes": "the contract says num_envs 0",
    "impossible-shape": "an observation shape no message could ever carry",
    "unparsable-handshake": "the HandshakeResponse bytes are not a protobuf message",
    "unparsable-replies": "every JoinResponse's bytes are not a protobuf message",
    "no-peer-info": "the Handshake leaves peer_info.component empty",
    "accepts-missing-base": "a Handshake without base is answered in-band, not refused",
    "drifting-contract": "each Handshake's contract carries a handshake counter in its spec metadata",
    "indices-on-full-step": "a full-width step response lists every lane in env_indices",
    "slow-steps": "every step takes SLOW_STEP seconds, deadlines honoured (graded against a tighter latency_bound_ms)",
    "one-seed-one-lane": "a single seed seeds lane 0 only, leaving the other lanes unseeded",
    "unseeded-reset-reseeds": "an unseeded reset draws fresh entropy instead of continuing the seeded generator",
    "seed-ignored-at-start": "every episode starts at position 0, whatever the seed",
    "extra-seeds-dropped": "surplus seeds are silently dropped",
    "partial-reset-off-by-one": "a partial reset seeds its lane with the seed plus one (and reports the seed sent)",
    "pipelined-lifo": "subset steps pipelined for one lane are applied latest first",
    "bad-action-moves": "a rejected action still draws the lanes' step noise",
    "out-of-range-reset-ok": "a partial reset of an out-of-range lane is answered with an empty reset",
    "sulks-after-bad-action": "the step after a rejected action is refused with a recoverable INTERNAL",
    "empty-request-invalid": "a JoinRequest with no arm is an INVALID_ACTION",
    "step-before-reset-invalid": "a step before any reset is an INVALID_ACTION, not NOT_READY",
    "fatal-stays-open": "a step before any reset is a non-recoverable NOT_READY, and the stream stays open",
    "refuses-join-after-probe": "after an empty JoinRequest, the next Join with no session active is UNAVAILABLE",
    "renders-many-lanes": "a Render naming two lanes renders lane 0",
    "render-bad-lane-unsupported": "a Render of an out-of-range lane is UNSUPPORTED",
}
RAW_FAULTS = {"unparsable-handshake", "unparsable-replies"}
NOT_PROTOBUF = b"\x0a\xff\xff\xff\xff\x0f not a protobuf message"  # a length prefix far beyond the bytes
VARIANTS = {
    "both-flags": "an episode that ends on its time limit sets terminated and truncated together",
    "offset-actions": "the Discrete action space starts at -1",
    "unknown-fields": "every message carries fields rlconform's protos do not declare",
    "next-step": "NEXT_STEP autoreset on a lane server with subset steps (0.1.0 never pairs the two)",
    "declares-step-limit": "the spec metadata declares max_episode_steps, which every episode keeps",
}
# Hostile servers: the checker must reach a verdict within its deadlines, with bounded memory.
HOSTILE = {
    "slow-replies": "every Join response comes SLOW_REPLY seconds late",
    "huge-reply": "every step observation is HUGE_REPLY bytes, beyond any sane message limit",
}
SLOW_REPLY = 1.0
SLOW_STEP = 0.012  # under the 20 ms floors of the timeout and overlap clauses, so only the latency bound sees it
# pipelined-lifo: a subset step waits this long over the number of steps waiting before its lane lock, so later
# arrivals go first (full-width steps do not wait, which keeps the run short)
LIFO_WINDOW = 0.02
HUGE_REPLY = 2 * 1024 * 1024


def lane_warning_infos(lanes: int) -> spaces_pb2.MetaMap:
    """Per-lane infos packed gymnasium-style, the last lane's carrying an observation conformance warning."""

    def meta_map(entries: dict[str, spaces_pb2.MetaValue]) -> spaces_pb2.MetaValue:
        return spaces_pb2.MetaValue(map_value=spaces_pb2.MetaMap(entries=entries))

    warning = meta_map(
        {
            "kind": spaces_pb2.MetaValue(string_value="observation"),
            "path": spaces_pb2.MetaValue(string_value="$"),
            "detail": spaces_pb2.MetaValue(string_value="$: element 0 above high bound"),
        }
    )
    per_lane = [meta_map({}) for _ in range(lanes - 1)]
    per_lane.append(
        meta_map({"rlmesh.conformance.warning": spaces_pb2.MetaValue(list_value=spaces_pb2.MetaList(items=[warning]))})
    )
    return spaces_pb2.MetaMap(
        entries={
            "final_info": spaces_pb2.MetaValue(list_value=spaces_pb2.MetaList(items=per_lane)),
            "_final_info": spaces_pb2.MetaValue(
                list_value=spaces_pb2.MetaList(items=[spaces_pb2.MetaValue(bool_value=True)] * lanes)
            ),
        }
    )
