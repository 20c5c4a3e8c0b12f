"""The `openenv` target kind: an OpenEnv env server, driven over /ws JSON and HTTP."""

from __future__ import annotations

from checks.core import Phase, PhaseContext, PhaseFunction, Suite, truncate
from checks.openenv import phases_basic, phases_http, phases_load, phases_sessions
from checks.openenv.clauses import CATALOGUE
from checks.openenv.options import OpenEnvOptions
from checks.openenv.session import SessionLost
from checks.wire import HandshakeFailed


def _phase(name: str, run: PhaseFunction, clauses: tuple[str, ...], description: str, **extra) -> Phase:
    """A phase whose undecided clauses become errors pointing at the clause that stopped it.

    That is the handshake clause when /ws refuses the upgrade, and the reply-in-time
    clause when a session missed a reply: the phase stops at its first lost session.
    """

    async def guarded(ctx: PhaseContext) -> None:
        try:
            await run(ctx)
        except HandshakeFailed as exc:  # judged once, by openenv.ws.handshake in the session phase
            ctx.report.error_undecided(
                clauses, f"no /ws session could be opened ({truncate(str(exc), 200)}); see openenv.ws.handshake"
            )
        except SessionLost as lost:  # already failed openenv.ws.reply-in-time, with this transcript
            ctx.report.error_undecided(
                clauses,
                f"not judged: the session lost its reply order after {lost} (see openenv.ws.reply-in-time)",
                lost.transcript,
            )

    guarded.__doc__ = run.__doc__
    return Phase(name, guarded, clauses, description, **extra)


PHASES = (
    _phase(
        "discover",
        phases_basic.discover,
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
    _phase(
        "session",
        phases_basic.session,
        (
            "openenv.ws.handshake",
            "openenv.ws.envelope",
            "openenv.ws.reward",
            "openenv.ws.reward-range",
            "openenv.schema.observation-valid",
            "openenv.state.shape",
            "openenv.state.episode-id",
            "openenv.state.step-count",
            "openenv.ws.order",
            "openenv.ws.unprompted",
            "openenv.ws.reply-in-time",
        ),
        "one /ws session: listen, reset with an episode id, state, step, state, pipelined messages, listen",
    ),
    _phase(
        "actions",
        phases_basic.actions,
        (
            "openenv.schema.action-accepted",
            "openenv.action.rejected",
            "openenv.action.not-executed",
            "openenv.action.session-usable",
            "openenv.errors.codes",
            "openenv.ws.envelope",
            "openenv.ws.reward",
            "openenv.ws.reward-range",
            "openenv.schema.observation-valid",
            "openenv.ws.reply-in-time",
        ),
        "replay each action in its own episode: valid ones accepted, invalid ones refused without effect",
    ),
    _phase(
        "errors",
        phases_basic.errors,
        (
            "openenv.errors.invalid-json",
            "openenv.errors.unknown-type",
            "openenv.errors.execution",
            "openenv.errors.codes",
            "openenv.ws.reply-in-time",
        ),
        "malformed JSON, unknown and missing types and an env crash, each followed by a reset",
    ),
    _phase(
        "capacity",
        phases_sessions.capacity,
        (
            "openenv.capacity.probed",
            "openenv.capacity.group",
            "openenv.capacity.reached",
            "openenv.ws.reply-in-time",
        ),
        "open sessions up to the group size plus one and see where the server refuses",
    ),
    _phase(
        "group",
        phases_sessions.group,
        (
            "openenv.determinism.sequential",
            "openenv.replay.expected-reward",
            "openenv.determinism.group",
            "openenv.isolation.sessions",
            "openenv.ws.reply-in-time",
        ),
        "the scripted episode alone twice, as an identical parallel group, and as a group of variants",
    ),
    _phase(
        "reset",
        phases_sessions.reset,
        (
            "openenv.reset.task-id",
            "openenv.reset.seed",
            "openenv.reset.seed-replay",
            "openenv.ws.reply-in-time",
        ),
        "reset with another task id and other seeds and compare; replay a seed in the same session",
    ),
    _phase(
        "termination",
        phases_sessions.termination,
        (
            "openenv.termination.within-budget",
            "openenv.termination.after-done",
            "openenv.ws.reply-in-time",
        ),
        "play the scripted episode to done within the step budget, then step once more",
    ),
    _phase(
        "http",
        phases_http.http,
        (
            "openenv.http.reset",
            "openenv.http.step",
            "openenv.http.invalid-action",
            "openenv.http.crash-response",
        ),
        "POST /reset and /step in simulation mode",
    ),
    _phase("mcp", phases_http.mcp, ("openenv.mcp.jsonrpc",), "POST /mcp with unparsable and invalid requests"),
    _phase(
        "latency",
        phases_load.latency,
        (
            "openenv.latency.figures",
            "openenv.latency.bound",
            "openenv.ws.reply-in-time",
        ),
        "reset+step round trips on one socket and across the parallel group",
        budget=12.0,
    ),
    _phase(
        "close",
        phases_sessions.close,
        (
            "openenv.close.clean",
            "openenv.close.frees-slot",
            "openenv.ws.reply-in-time",
        ),
        "close by message, by WebSocket close and by dropping, each time needing the freed slot",
    ),
    _phase(
        "survive",
        phases_load.survive,
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
    spec_version="openenv-core 0.3.0",
    url_example="http://127.0.0.1:8000",
)
