"""The `openenv` target kind: an OpenEnv env server, driven over /ws JSON and HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from checks.core import Phase, Suite
from checks.decision import record
from checks.openenv.clauses import CATALOGUE
from checks.openenv.judging import OBSERVATION_CLAUSES
from checks.openenv.judging_timing import reply_in_time
from checks.openenv.options import Ctx, Facts, OpenEnvOptions
from checks.openenv.phase_actions import actions_phase
from checks.openenv.phase_attach import attach_phase
from checks.openenv.phase_capacity import capacity_phase
from checks.openenv.phase_close import close_phase
from checks.openenv.phase_discover import discover_phase
from checks.openenv.phase_errors import errors_phase
from checks.openenv.phase_group import group_phase
from checks.openenv.phase_http import http_phase
from checks.openenv.phase_latency import latency_phase
from checks.openenv.phase_mcp import mcp_phase
from checks.openenv.phase_overlap import overlap_phase
from checks.openenv.phase_production import production_phase
from checks.openenv.phase_reset import reset_phase
from checks.openenv.phase_session import session_phase
from checks.openenv.phase_survive import survive_phase
from checks.openenv.phase_tasks import tasks_phase
from checks.openenv.phase_termination import termination_phase

PhaseRun = Callable[[Ctx], Awaitable[None]]


def timed(run: PhaseRun) -> PhaseRun:
    """`run`, then openenv.ws.reply-in-time judged on every wait for a reply its sessions logged.

    Also when the phase stops (a lost reply raises PhaseStopped): the miss is recorded before
    the phase's undecided clauses become errors."""

    async def timed_run(ctx: Ctx) -> None:
        start = len(ctx.state.waits)
        try:
            await run(ctx)
        finally:
            for wait in ctx.state.waits[start:]:
                record(ctx.report, reply_in_time(wait), wait.transcript)

    return timed_run


PHASES = (
    Phase(
        "discover",
        timed(discover_phase),
        (
            "openenv.discover.health",
            "openenv.discover.metadata",
            "openenv.discover.schema",
            "openenv.discover.openapi",
            "openenv.discover.profile",
            "openenv.mode.consistent",
        ),
        "GET /health, /metadata, /schema and /openapi.json; read the mode and the profile",
    ),
    Phase(
        "session",
        timed(session_phase),
        (
            "openenv.ws.handshake",
            *OBSERVATION_CLAUSES,
            "openenv.state.shape",
            "openenv.state.episode-id",
            "openenv.state.step-count",
            "openenv.ws.order",
            "openenv.ws.unprompted",
            "openenv.ws.reply-in-time",
        ),
        "one /ws session: listen, reset with an episode id, state, step, state, pipelined messages, listen",
    ),
    Phase(
        "actions",
        timed(actions_phase),
        (
            "openenv.schema.action-accepted",
            "openenv.action.rejected",
            "openenv.action.not-executed",
            "openenv.action.session-usable",
            "openenv.errors.codes",
            *OBSERVATION_CLAUSES,
            "openenv.ws.reply-in-time",
        ),
        "replay each action in its own episode: valid ones accepted, invalid ones refused without effect",
    ),
    Phase(
        "errors",
        timed(errors_phase),
        (
            "openenv.errors.invalid-json",
            "openenv.errors.unknown-type",
            "openenv.errors.execution",
            "openenv.errors.codes",
            "openenv.ws.reply-in-time",
        ),
        "malformed JSON, unknown and missing types and an env crash, each followed by a reset",
    ),
    Phase(
        "capacity",
        timed(capacity_phase),
        (
            "openenv.capacity.probed",
            "openenv.capacity.group",
            "openenv.capacity.reached",
            "openenv.ws.reply-in-time",
        ),
        "open sessions up to the group size plus one and see where the server refuses",
    ),
    Phase(
        "group",
        timed(group_phase),
        (
            "openenv.determinism.sequential",
            "openenv.replay.expected-reward",
            "openenv.determinism.group",
            "openenv.isolation.sessions",
            "openenv.ws.reward",
            "openenv.ws.reward-number",
            "openenv.ws.reward-range",
            "openenv.ws.reply-in-time",
        ),
        "the scripted episode alone twice, as an identical parallel group, and as a group of variants",
    ),
    Phase(
        "reset",
        timed(reset_phase),
        (
            "openenv.reset.task-id",
            "openenv.reset.seed",
            "openenv.reset.seed-replay",
            "openenv.ws.reply-in-time",
        ),
        "reset with another task id and other seeds and compare; replay a seed in the same session",
    ),
    Phase(
        "termination",
        timed(termination_phase),
        (
            "openenv.termination.within-budget",
            "openenv.termination.after-done",
            "openenv.ws.reward",
            "openenv.ws.reward-number",
            "openenv.ws.reward-range",
            "openenv.ws.reply-in-time",
        ),
        "play the scripted episode to done within the step budget, then step once more",
    ),
    Phase(
        "http",
        timed(http_phase),
        (
            "openenv.http.reset",
            "openenv.http.step",
            "openenv.http.invalid-action",
            "openenv.http.crash-response",
            "openenv.http.metadata",
        ),
        "POST /reset and /step in simulation mode",
    ),
    Phase(
        "production",
        timed(production_phase),
        ("openenv.production.harness", "openenv.production.http-absent", "openenv.production.ws-episodes"),
        "the /harness handshake; in production mode (read from OpenAPI) HTTP /reset, /step, /state and /ws",
    ),
    Phase(
        "mcp",
        timed(mcp_phase),
        ("openenv.mcp.error-object", "openenv.mcp.error-code", "openenv.mcp.missing-name", "openenv.mcp.input-schema"),
        "POST /mcp with unparsable and invalid requests, tools/call without a name, tools/list",
    ),
    Phase(
        "attach",
        timed(attach_phase),
        (
            "openenv.attach.session",
            "openenv.attach.unknown-id",
            "openenv.attach.single",
            "openenv.attach.close",
            "openenv.ws.reply-in-time",
        ),
        "an HTTP MCP session, /ws?session_id= attached to it, an unknown id and a second attach, then close it",
    ),
    Phase(
        "tasks",
        timed(tasks_phase),
        ("openenv.tasks.consistent", "openenv.tasks.reset"),
        "the task API when served: its routes agree on a split, and a listed task resets",
    ),
    Phase(
        "latency",
        timed(latency_phase),
        (
            "openenv.latency.figures",
            "openenv.latency.bound",
            "openenv.ws.reply-in-time",
        ),
        "reset+step round trips on one socket and across the parallel group",
        budget=12.0,
    ),
    Phase(
        "overlap",
        timed(overlap_phase),
        ("openenv.concurrency.overlap", "openenv.ws.reply-in-time"),
        "one slow step alone, then the same step sent at once on every session of the group",
        budget=8.0,
    ),
    Phase(
        "close",
        timed(close_phase),
        (
            "openenv.close.clean",
            "openenv.close.frees-slot",
            "openenv.ws.reply-in-time",
        ),
        "close by message, by WebSocket close and by dropping, each time needing the freed slot",
    ),
    Phase(
        "survive",
        timed(survive_phase),
        (
            "openenv.survive.hostile",
            "openenv.survive.clean-end",
            "openenv.ws.reply-in-time",
        ),
        "hostile frames, disconnects and a burst of bad sessions; the server and a bystander must live on",
    ),
)

SUITE = Suite(
    kind="openenv",
    title="OpenEnv env server (/ws JSON and HTTP)",
    url_schemes=("http", "https"),
    options_model=OpenEnvOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    new_state=Facts,
    spec_version="openenv-core 0.3.0",
    url_example="http://127.0.0.1:8000",
)
