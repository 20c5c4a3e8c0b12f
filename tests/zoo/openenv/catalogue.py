"""The OpenEnv zoo: servers that conform except for ONE fault each.

Each module serves one: most are openenv-core's own server over a broken env
(`tests/checks/openenv/envs.py`) or with one answer changed (`rerouted.py`: an HTTP
route, or what /ws sends), the rest the hand-written server in `handmade.py` with
one quirk. `start` is the module's `make_app`.
"""

from __future__ import annotations

from dataclasses import dataclass

from checks.core import Verdict
from tests.zoo.entry import ZooEntry
from tests.zoo.openenv import (
    advertises_style,
    app_heartbeat,
    attach_ignores_id,
    attach_no_close,
    attach_refuses_own,
    attach_second_attach,
    bool_reward,
    capacity_one,
    close_reply,
    closes_on_unknown_type,
    counts_refused_steps,
    crashes_on_odd_action,
    deaf_after_non_object,
    dies_on_binary,
    ends_on_refused_action,
    flat_envelope,
    greets_on_connect,
    health_500,
    http_invalid_400,
    http_no_metadata,
    http_reset_flat,
    http_step_no_done,
    ignores_episode_id,
    ignores_seed,
    ignores_task_id,
    invalid_json_as_unknown,
    late_out_of_range,
    leaky_sessions,
    mcp_500,
    mcp_not_jsonrpc,
    mcp_other_code,
    mcp_snake_schema,
    mcp_wrong_name_code,
    metadata_mismatch,
    miscounted_tasks,
    negative_step_count,
    never_done,
    no_capacity_reached,
    nondeterministic,
    openapi_mixed_mode,
    openapi_no_version,
    production_serves_http,
    schema_drift,
    schema_missing_state,
    schema_requires_score,
    serial_sessions,
    session_elsewhere,
    shared_rng,
    silent_harness,
    skips_seed_zero,
    slot_leak,
    slow_metadata,
    slow_reset,
    slow_steps,
    stale_step_count,
    state_jumps_queue,
    step_count_off,
    string_reward,
    swallows_crash,
    unknown_error_code,
    unresettable_task,
    wrong_final_reward,
    wrong_validation_code,
)


@dataclass(frozen=True, kw_only=True)
class OpenEnvEntry(ZooEntry):
    """A broken OpenEnv server; `start()` is its ASGI app."""

    verdict: Verdict = Verdict.FAIL  # WARN: a SHOULD, which passes the run and fails only the strict gate
    named: str | None = None  # the finding names the culprit, e.g. the refused property
    run_as_process: bool = False  # served by `python -m` its module: the checker's hostile input may end it


ZOO: dict[str, OpenEnvEntry] = {
    "advertises-style": OpenEnvEntry(advertises_style.make_app, "openenv.schema.action-accepted", named="'style'"),
    "app-heartbeat": OpenEnvEntry(app_heartbeat.make_app, "openenv.ws.unprompted"),
    "bool-reward": OpenEnvEntry(bool_reward.make_app, "openenv.ws.reward-number", verdict=Verdict.WARN),
    "string-reward": OpenEnvEntry(
        string_reward.make_app,
        "openenv.ws.reward",
        # The schema types the reward as a number, and the expected reward is compared as one.
        knock_on=frozenset({"openenv.schema.observation-valid", "openenv.replay.expected-reward"}),
    ),
    "capacity-one": OpenEnvEntry(capacity_one.make_app, "openenv.capacity.group", options={"group_size": 5}),
    "close-reply": OpenEnvEntry(close_reply.make_app, "openenv.close.clean"),
    "closes-on-unknown-type": OpenEnvEntry(closes_on_unknown_type.make_app, "openenv.errors.unknown-type"),
    "counts-refused-steps": OpenEnvEntry(
        counts_refused_steps.make_app, "openenv.action.not-executed", knock_on=frozenset({"openenv.state.step-count"})
    ),
    "crashes-on-odd-action": OpenEnvEntry(
        crashes_on_odd_action.make_app,
        "openenv.action.rejected",
        knock_on=frozenset({"openenv.http.invalid-action"}),
        options={"actions": [{"answer": "paris"}, {"answer": 0}]},
    ),
    "dies-on-binary": OpenEnvEntry(
        dies_on_binary.make_app,
        "openenv.survive.hostile",
        knock_on=frozenset({"openenv.survive.clean-end"}),
        run_as_process=True,
    ),
    "flat-envelope": OpenEnvEntry(flat_envelope.make_app, "openenv.ws.envelope"),
    "greets-on-connect": OpenEnvEntry(greets_on_connect.make_app, "openenv.ws.unprompted", options={"group_size": 3}),
    "health-500": OpenEnvEntry(health_500.make_app, "openenv.discover.health"),
    "ignores-episode-id": OpenEnvEntry(ignores_episode_id.make_app, "openenv.state.episode-id"),
    "ignores-seed": OpenEnvEntry(ignores_seed.make_app, "openenv.reset.seed", options={"seed_dependent": True}),
    "ignores-task-id": OpenEnvEntry(ignores_task_id.make_app, "openenv.reset.task-id"),
    "late-out-of-range": OpenEnvEntry(
        late_out_of_range.make_app,
        "openenv.ws.reward-range",
        options={**late_out_of_range.OPTIONS, "group_size": 3},
        verdict=Verdict.WARN,
    ),
    "leaky-sessions": OpenEnvEntry(leaky_sessions.make_app, "openenv.isolation.sessions"),
    "mcp-500": OpenEnvEntry(mcp_500.make_app, "openenv.mcp.error-object"),
    "mcp-not-jsonrpc": OpenEnvEntry(mcp_not_jsonrpc.make_app, "openenv.mcp.error-object"),
    "attach-ignores-id": OpenEnvEntry(
        attach_ignores_id.make_app,
        "openenv.attach.unknown-id",
        verdict=Verdict.WARN,
        knock_on=frozenset({"openenv.attach.single"}),
    ),
    "http-no-metadata": OpenEnvEntry(http_no_metadata.make_app, "openenv.http.metadata", verdict=Verdict.WARN),
    "production-serves-http": OpenEnvEntry(
        production_serves_http.make_app, "openenv.production.http-absent", verdict=Verdict.WARN
    ),
    "silent-harness": OpenEnvEntry(silent_harness.make_app, "openenv.production.harness", verdict=Verdict.WARN),
    "mcp-other-code": OpenEnvEntry(mcp_other_code.make_app, "openenv.mcp.error-code", verdict=Verdict.WARN),
    "mcp-snake-schema": OpenEnvEntry(mcp_snake_schema.make_app, "openenv.mcp.input-schema", verdict=Verdict.WARN),
    "mcp-wrong-name-code": OpenEnvEntry(mcp_wrong_name_code.make_app, "openenv.mcp.missing-name", verdict=Verdict.WARN),
    "metadata-mismatch": OpenEnvEntry(
        metadata_mismatch.make_app,
        "openenv.ws.metadata-mirror",
        verdict=Verdict.WARN,
    ),
    "miscounted-tasks": OpenEnvEntry(miscounted_tasks.make_app, "openenv.tasks.consistent", verdict=Verdict.WARN),
    "never-done": OpenEnvEntry(
        never_done.make_app, "openenv.termination.within-budget", options={"expected_reward": None, "max_steps": 6}
    ),
    "no-capacity-reached": OpenEnvEntry(
        no_capacity_reached.make_app, "openenv.capacity.reached", options={"group_size": 2}
    ),
    "nondeterministic": OpenEnvEntry(
        nondeterministic.make_app,
        "openenv.determinism.sequential",
        knock_on=frozenset({"openenv.determinism.group", "openenv.reset.seed-replay"}),
    ),
    "schema-drift": OpenEnvEntry(schema_drift.make_app, "openenv.schema.action-accepted", named="'hint'"),
    "serial-sessions": OpenEnvEntry(
        serial_sessions.make_app, "openenv.concurrency.overlap", options={"group_size": 5}, verdict=Verdict.WARN
    ),
    "session-elsewhere": OpenEnvEntry(
        session_elsewhere.make_app, "openenv.ws.handshake", knock_on=frozenset({"openenv.capacity.group"})
    ),
    "shared-rng": OpenEnvEntry(
        shared_rng.make_app, "openenv.determinism.group", knock_on=frozenset({"openenv.isolation.sessions"})
    ),
    "skips-seed-zero": OpenEnvEntry(skips_seed_zero.make_app, "openenv.reset.seed-replay"),
    "slot-leak": OpenEnvEntry(slot_leak.make_app, "openenv.close.frees-slot", options={"group_size": 3}),
    "slow-metadata": OpenEnvEntry(slow_metadata.make_app, "openenv.discover.metadata", options={"timeout": 2.0}),
    "slow-reset": OpenEnvEntry(slow_reset.make_app, "openenv.ws.reply-in-time", options=slow_reset.OPTIONS),
    "stale-step-count": OpenEnvEntry(stale_step_count.make_app, "openenv.state.step-count"),
    "step-count-off": OpenEnvEntry(step_count_off.make_app, "openenv.state.step-count"),
    "unresettable-task": OpenEnvEntry(unresettable_task.make_app, "openenv.tasks.reset", verdict=Verdict.WARN),
    "wrong-validation-code": OpenEnvEntry(wrong_validation_code.make_app, "openenv.action.rejected"),
    "attach-refuses-own": OpenEnvEntry(attach_refuses_own.make_app, "openenv.attach.session", verdict=Verdict.WARN),
    "attach-second-attach": OpenEnvEntry(attach_second_attach.make_app, "openenv.attach.single", verdict=Verdict.WARN),
    "attach-no-close": OpenEnvEntry(attach_no_close.make_app, "openenv.attach.close", verdict=Verdict.WARN),
    "deaf-after-non-object": OpenEnvEntry(
        deaf_after_non_object.make_app,
        "openenv.survive.clean-end",
        options=deaf_after_non_object.OPTIONS,
        verdict=Verdict.WARN,
    ),
    "ends-on-refused-action": OpenEnvEntry(
        ends_on_refused_action.make_app,
        "openenv.action.session-usable",
        knock_on=frozenset({"openenv.ws.order", "openenv.state.step-count"}),
        may_error=True,
    ),
    "http-invalid-400": OpenEnvEntry(http_invalid_400.make_app, "openenv.http.invalid-action"),
    "http-reset-flat": OpenEnvEntry(http_reset_flat.make_app, "openenv.http.reset"),
    "http-step-no-done": OpenEnvEntry(http_step_no_done.make_app, "openenv.http.step"),
    "invalid-json-as-unknown": OpenEnvEntry(invalid_json_as_unknown.make_app, "openenv.errors.invalid-json"),
    "negative-step-count": OpenEnvEntry(
        negative_step_count.make_app, "openenv.state.shape", knock_on=frozenset({"openenv.state.step-count"})
    ),
    "openapi-mixed-mode": OpenEnvEntry(openapi_mixed_mode.make_app, "openenv.mode.consistent"),
    "openapi-no-version": OpenEnvEntry(openapi_no_version.make_app, "openenv.discover.openapi", verdict=Verdict.WARN),
    "schema-missing-state": OpenEnvEntry(schema_missing_state.make_app, "openenv.discover.schema", may_error=True),
    "schema-requires-score": OpenEnvEntry(schema_requires_score.make_app, "openenv.schema.observation-valid"),
    "slow-steps": OpenEnvEntry(slow_steps.make_app, "openenv.latency.bound", options=slow_steps.OPTIONS),
    "swallows-crash": OpenEnvEntry(swallows_crash.make_app, "openenv.errors.execution"),
    "unknown-error-code": OpenEnvEntry(
        unknown_error_code.make_app, "openenv.errors.codes", knock_on=frozenset({"openenv.action.rejected"})
    ),
    "state-jumps-queue": OpenEnvEntry(state_jumps_queue.make_app, "openenv.ws.order"),
    "wrong-final-reward": OpenEnvEntry(wrong_final_reward.make_app, "openenv.replay.expected-reward"),
}
