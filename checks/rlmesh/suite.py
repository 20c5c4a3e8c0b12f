"""The `rlmesh` suite: an RLMesh env endpoint (`rlmesh-wire-v1`) checked over gRPC."""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.rlmesh.clauses import CATALOGUE
from checks.rlmesh.options import RlmeshOptions, RlmeshRun
from checks.rlmesh.phase_episodes import episodes_phase
from checks.rlmesh.phase_errors import errors_phase
from checks.rlmesh.phase_handshake import handshake_phase
from checks.rlmesh.phase_lanes import lanes_phase
from checks.rlmesh.phase_render_close import render_close_phase
from checks.rlmesh.phase_seeding import seeding_phase
from checks.rlmesh.phase_shutdown import shutdown_phase

PHASES = (
    Phase(
        "handshake",
        handshake_phase,
        (
            "rlmesh.h1.compatible",
            "rlmesh.h1.num-envs",
            "rlmesh.h1.autoreset-mode",
            "rlmesh.h1.spaces",
            "rlmesh.h1.peer-info",
            "rlmesh.h1.render-mode-declared",
            "rlmesh.h2.generation-gate",
            "rlmesh.h2.missing-base",
            "rlmesh.h3.contract-stable",
            "rlmesh.h5.unknown-fields",
            "rlmesh.o1.health",
            "rlmesh.o1.handshake-latency",
        ),
        "generation gate, the env contract and its spaces, capabilities, health",
    ),
    Phase(
        "episodes",
        episodes_phase,
        (
            "rlmesh.h2.configure-edition",
            "rlmesh.s1.answered",
            "rlmesh.v2.obs-layout",
            "rlmesh.v2.obs-in-space",
            "rlmesh.v2.no-conformance-warning",
            "rlmesh.s1.step-shape",
            "rlmesh.s1.reward-finite",
            "rlmesh.s2.episode-accounting",
            "rlmesh.s2.step-limit",
            "rlmesh.s3.autoreset",
            "rlmesh.o1.step-latency",
            "rlmesh.h5.unknown-fields",
            "rlmesh.e5.request-id-echo",
        ),
        "the edition pinned, then seeded episodes with sampled actions: observations, rewards, masks, completions, "
        "autoreset, step RTT",
        budget=12,  # in step timeouts: a step budget of slow steps needs room
    ),
    Phase(
        "seeding",
        seeding_phase,
        (
            "rlmesh.s4.seeded-replay",
            "rlmesh.s4.seed-chain",
            "rlmesh.s4.seed-matters",
            "rlmesh.s4.seed-all-lanes",
            "rlmesh.s5.seed-length",
            "rlmesh.e5.request-id-echo",
        ),
        "the same seeds replay exactly on every lane; one seed for many lanes; seed-list length",
    ),
    Phase(
        "lanes",
        lanes_phase,
        (
            "rlmesh.h4.capability-honest",
            "rlmesh.l1.subset-step",
            "rlmesh.l1.partial-reset",
            "rlmesh.l2.lanes-overlap",
            "rlmesh.l3.lane-fifo",
            "rlmesh.e5.request-id-echo",
        ),
        "subset steps and partial resets as advertised, lane steps overlapping in time, per-lane order",
        budget=12,
    ),
    Phase(
        "errors",
        errors_phase,
        (
            "rlmesh.e2.step-before-reset",
            "rlmesh.v3.bad-action-rejected",
            "rlmesh.v3.state-unchanged",
            "rlmesh.e2.session-usable",
            "rlmesh.l1.bad-index",
            "rlmesh.e2.empty-request",
            "rlmesh.e2.fatal-ends-stream",
            "rlmesh.e3.timeout",
            "rlmesh.e4.single-session",
            "rlmesh.e5.request-id-echo",
            "rlmesh.e1.survives",
        ),
        "malformed actions, bad lanes, an empty request, a step past its deadline, a second session: "
        "recoverable errors, a usable stream",
    ),
    Phase(
        "render-close",
        render_close_phase,
        (
            "rlmesh.r1.render-multi-lane",
            "rlmesh.r1.render",
            "rlmesh.r1.render-bad-lane",
            "rlmesh.c1.close",
            "rlmesh.c1.reopen",
            "rlmesh.h3.contract-stable",
            "rlmesh.e5.request-id-echo",
        ),
        "render by lane, Close reporting active episodes, a new session afterwards, the contract unchanged",
    ),
    Phase(
        "shutdown",
        shutdown_phase,
        ("rlmesh.c2.shutdown",),
        "ask the endpoint to shut down: refused and still serving, or accepted and gone promptly",
        default=False,
    ),
)

SUITE = Suite(
    kind="rlmesh",
    title="RLMesh env service (rlmesh-wire-v1, gRPC)",
    url_schemes=(),
    options_model=RlmeshOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    spec_version="rlmesh-wire-v1",
    url_example="127.0.0.1:50051",
    new_state=RlmeshRun,
)
