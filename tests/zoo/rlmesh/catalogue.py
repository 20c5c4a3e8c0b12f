"""The rlmesh zoo: env servers that conform except for ONE fault each.

Two sources. Hand-written (`handmade.py`): a grpcio server on our own protos,
for faults the rlmesh package cannot produce; `start` is the fault's name,
passed to `handmade.start(faults={start})`. Served (`envs.py`): a gymnasium
env with a bug, served by the real `rlmesh` package in a subprocess
(`python -m tests.zoo.rlmesh.envs START`); `start` is the env's name.
"""

from __future__ import annotations

from dataclasses import dataclass

from tests.zoo.entry import ZooEntry


@dataclass(frozen=True, kw_only=True)
class RlmeshEntry(ZooEntry):
    """A broken rlmesh server: a hand-written fault, or a broken env on the real server."""

    served: bool = False  # True: `start` names an env of envs.py, served by the rlmesh package


ZOO: dict[str, RlmeshEntry] = {
    # hand-written faults
    "any-generation": RlmeshEntry("any-generation", "rlmesh.h2.generation-gate"),
    "fatal-bad-action": RlmeshEntry("fatal-bad-action", "rlmesh.v3.bad-action-rejected"),
    "serial-lanes": RlmeshEntry("serial-lanes", "rlmesh.l2.lanes-overlap"),
    "never-stops": RlmeshEntry("never-stops", "rlmesh.c2.shutdown"),
    "double-sessions": RlmeshEntry("double-sessions", "rlmesh.e4.single-session"),
    "wide-subset": RlmeshEntry("wide-subset", "rlmesh.h4.capability-honest"),
    "unspecified-autoreset": RlmeshEntry("unspecified-autoreset", "rlmesh.h1.autoreset-mode"),
    "f64-obs": RlmeshEntry("f64-obs", "rlmesh.v2.obs-layout"),
    "off-by-one-steps": RlmeshEntry("off-by-one-steps", "rlmesh.s2.episode-accounting"),
    "forgets-on-close": RlmeshEntry("forgets-on-close", "rlmesh.c1.close"),
    "wrong-echo": RlmeshEntry("wrong-echo", "rlmesh.e5.request-id-echo"),
    "ignores-timeout": RlmeshEntry("ignores-timeout", "rlmesh.e3.timeout"),
    "answers-after-timeout": RlmeshEntry(
        "answers-after-timeout",
        "rlmesh.e3.timeout",
        knock_on=frozenset({"rlmesh.e5.request-id-echo"}),  # two answers for one request id
    ),
    "autoreset-reward": RlmeshEntry("autoreset-reward", "rlmesh.s3.autoreset"),
    "lane-warnings": RlmeshEntry("lane-warnings", "rlmesh.v2.no-conformance-warning"),
    "slot-leak": RlmeshEntry("slot-leak", "rlmesh.c1.reopen"),
    "ignores-configure": RlmeshEntry("ignores-configure", "rlmesh.h2.configure-edition"),
    "sorted-subset": RlmeshEntry("sorted-subset", "rlmesh.l1.subset-step"),
    "accepts-any-action": RlmeshEntry("accepts-any-action", "rlmesh.v3.bad-action-rejected"),
    "big-endian-obs": RlmeshEntry("big-endian-obs", "rlmesh.v2.obs-in-space"),
    "shared-rng": RlmeshEntry("shared-rng", "rlmesh.l1.subset-step"),
    "join-ends-at-once": RlmeshEntry("join-ends-at-once", "rlmesh.s1.answered"),
    "zero-lanes": RlmeshEntry("zero-lanes", "rlmesh.h1.num-envs"),
    "impossible-shape": RlmeshEntry("impossible-shape", "rlmesh.h1.spaces"),
    "unparsable-handshake": RlmeshEntry("unparsable-handshake", "rlmesh.h1.compatible"),
    "unparsable-replies": RlmeshEntry("unparsable-replies", "rlmesh.s1.answered"),
    "no-peer-info": RlmeshEntry("no-peer-info", "rlmesh.h1.peer-info"),
    "accepts-missing-base": RlmeshEntry("accepts-missing-base", "rlmesh.h2.missing-base"),
    "drifting-contract": RlmeshEntry("drifting-contract", "rlmesh.h3.contract-stable"),
    "indices-on-full-step": RlmeshEntry("indices-on-full-step", "rlmesh.s1.step-shape"),
    "slow-steps": RlmeshEntry("slow-steps", "rlmesh.o1.step-latency", options={"latency_bound_ms": 5}),
    "one-seed-one-lane": RlmeshEntry("one-seed-one-lane", "rlmesh.s4.seed-all-lanes"),
    "unseeded-reset-reseeds": RlmeshEntry("unseeded-reset-reseeds", "rlmesh.s4.seed-chain"),
    "seed-ignored-at-start": RlmeshEntry("seed-ignored-at-start", "rlmesh.s4.seed-matters"),
    "extra-seeds-dropped": RlmeshEntry("extra-seeds-dropped", "rlmesh.s5.seed-length"),
    "partial-reset-off-by-one": RlmeshEntry("partial-reset-off-by-one", "rlmesh.l1.partial-reset"),
    "pipelined-lifo": RlmeshEntry("pipelined-lifo", "rlmesh.l3.lane-fifo"),
    "bad-action-moves": RlmeshEntry("bad-action-moves", "rlmesh.v3.state-unchanged"),
    "out-of-range-reset-ok": RlmeshEntry("out-of-range-reset-ok", "rlmesh.l1.bad-index"),
    "sulks-after-bad-action": RlmeshEntry("sulks-after-bad-action", "rlmesh.e2.session-usable"),
    "empty-request-invalid": RlmeshEntry("empty-request-invalid", "rlmesh.e2.empty-request"),
    "step-before-reset-invalid": RlmeshEntry("step-before-reset-invalid", "rlmesh.e2.step-before-reset"),
    "fatal-stays-open": RlmeshEntry(
        "fatal-stays-open",
        "rlmesh.e2.fatal-ends-stream",
        # The only probe a conforming server may answer with a non-recoverable error is none: every probe asks for a
        # recoverable one, so the fatal error that must end the stream breaks the probe's own clause too.
        knock_on=frozenset({"rlmesh.e2.step-before-reset"}),
    ),
    "refuses-join-after-probe": RlmeshEntry("refuses-join-after-probe", "rlmesh.e1.survives"),
    "renders-many-lanes": RlmeshEntry("renders-many-lanes", "rlmesh.r1.render-multi-lane"),
    "render-bad-lane-unsupported": RlmeshEntry("render-bad-lane-unsupported", "rlmesh.r1.render-bad-lane"),
    # broken envs on the real server
    "obs-out-of-bounds": RlmeshEntry("obs-out-of-bounds", "rlmesh.v2.obs-in-space", served=True),
    "nan-reward": RlmeshEntry("nan-reward", "rlmesh.s1.reward-finite", served=True),
    "ignores-seed": RlmeshEntry(
        "ignores-seed",
        "rlmesh.s4.seeded-replay",
        knock_on=frozenset({"rlmesh.l1.partial-reset", "rlmesh.s4.seed-all-lanes"}),
        served=True,
    ),
    "info-not-a-map": RlmeshEntry("info-not-a-map", "rlmesh.s1.answered", served=True),
    "nan-observation": RlmeshEntry("nan-observation", "rlmesh.s1.answered", served=True),
    "render-raises": RlmeshEntry("render-raises", "rlmesh.r1.render", served=True),
    "undeclared-render-mode": RlmeshEntry("undeclared-render-mode", "rlmesh.h1.render-mode-declared", served=True),
    "never-ends": RlmeshEntry("never-ends", "rlmesh.s2.step-limit", served=True),
}
