"""Phases on one connection at a time: discovery, the /ws basics, actions and recoverable errors."""

from __future__ import annotations

import json

from checks.core import PhaseContext, summarize
from checks.openenv.episodes import finish
from checks.openenv.facts import action_plan, facts, load_schema, usable_schema
from checks.openenv.http_probe import HttpProbe
from checks.openenv.judging import (
    code_problem,
    error_problem,
    judge_observation,
    state_problem,
    step_count,
    unprompted_problem,
)
from checks.openenv.options import options_of
from checks.openenv.session import QUIET_BEFORE, open_session
from checks.wire import HandshakeFailed

SIMULATION_PATHS = ("/reset", "/step", "/state")
# How long the session listens after its last reply for frames nobody asked for: longer than the
# wait for a greeting, so that an application-level heartbeat on idle sockets shows too.
QUIET_AFTER = 1.0


async def discover(ctx: PhaseContext) -> None:
    report, known = ctx.report, facts(ctx)
    async with HttpProbe(ctx.url, report.transcript("discovery endpoints"), ctx.timeout) as http:
        health = await http.get("/health")
        report.check(
            health.status == 200 and isinstance(health.body, dict) and health.body.get("status") == "healthy",
            "openenv.discover.health",
            '200 {"status": "healthy"}',
            health.describe(),
            http.transcript,
        )

        metadata = await http.get("/metadata")
        body = metadata.body if isinstance(metadata.body, dict) else {}
        report.check(
            metadata.status == 200 and isinstance(body.get("name"), str) and isinstance(body.get("description"), str),
            "openenv.discover.metadata",
            "200 with string name and description",
            metadata.describe(),
            http.transcript,
        )

        schema = await http.get("/schema")
        known.schema = usable_schema(schema.body) if schema.status == 200 else None
        known.schema_fetched = True
        report.check(
            known.schema is not None,
            "openenv.discover.schema",
            "200 with object action, observation and state schemas",
            schema.describe(),
            http.transcript,
        )

        openapi = await http.get("/openapi.json")
        document = openapi.body if isinstance(openapi.body, dict) else {}
        info = document.get("info") if isinstance(document.get("info"), dict) else {}
        version = info.get("version")
        report.check(
            openapi.status == 200 and isinstance(version, str),
            "openenv.discover.openapi",
            "200 with a string info.version",
            openapi.describe(),
            http.transcript,
        )

    paths = document.get("paths") if openapi.status == 200 else None
    known.openapi_paths, known.openapi_fetched = (set(paths) if isinstance(paths, dict) else None), True
    if known.openapi_paths is None:
        report.unsupported("openenv.mode.consistent", "no OpenAPI paths to read the mode from", http.transcript)
    else:
        present = [p for p in SIMULATION_PATHS if p in known.openapi_paths]
        mode = "simulation" if len(present) == 3 else "production" if not present else "mixed"
        report.check(
            mode != "mixed",
            "openenv.mode.consistent",
            "all or none of /reset, /step, /state",
            f"{mode} mode: {', '.join(present) or 'none'} listed",
            http.transcript,
        )
    markers = [
        m
        for m, seen in (
            ("/list_environments path", "/list_environments" in (known.openapi_paths or ())),
            ("reset_observation in /schema", isinstance(schema.body, dict) and "reset_observation" in schema.body),
        )
        if seen
    ]
    profile = f"openenv-http/{version.split('.')[0]}.x" if isinstance(version, str) and version else "unknown"
    report.info(
        "openenv.discover.profile",
        f"info.version {version!r} (profile {profile}); 0.10+ markers: {', '.join(markers) or 'none'}",
        evidence=http.transcript,
    )


async def session(ctx: PhaseContext) -> None:
    """One session: quiet, reset with an episode id, state, step, state, four pipelined messages, quiet."""
    report, options = ctx.report, options_of(ctx)
    schema = await load_schema(ctx)
    plan = action_plan(options, schema)
    episode_id = "rlconform-episode-1"
    try:
        ws = await open_session(ctx, "reset, state, step, state, pipelined")
    except HandshakeFailed as exc:
        report.failed("openenv.ws.handshake", "101 Switching Protocols on GET /ws", str(exc))
        return
    try:
        early = await ws.listen(min(ctx.timeout, QUIET_BEFORE))
        facts(ctx).greets = unprompted_problem(early) is not None
        report.check(
            not facts(ctx).greets,
            "openenv.ws.unprompted",
            "no frame before the first message",
            unprompted_problem(early) or "none came",
            ws.transcript,
        )
        reset = await ws.reset({**options.reset, "episode_id": episode_id})
        report.check(
            reset.is_json and not reset.binary,
            "openenv.ws.handshake",
            "upgraded without subprotocol, and a JSON text frame answering reset",
            reset.describe(),
            ws.transcript,
        )
        judge_observation(report, reset, schema, options, ws.transcript, on_reset=True)

        state = await ws.state()
        report.check(
            state_problem(state) is None,
            "openenv.state.shape",
            "a state frame with step_count >= 0",
            state_problem(state) or summarize(state.data),
            ws.transcript,
        )
        shown_id = state.data.get("episode_id") if isinstance(state.data, dict) else None
        report.check(
            shown_id == episode_id,
            "openenv.state.episode-id",
            f"episode_id {episode_id!r}",
            f"episode_id {shown_id!r}",
            ws.transcript,
        )
        report.check(
            step_count(state) == 0,
            "openenv.state.step-count",
            "step_count 0 after reset",
            f"step_count {step_count(state)!r}",
            ws.transcript,
        )

        if not plan.valid:
            report.error("openenv.ws.order", "no valid action: /schema.action gave none and the options list none")
            return
        step = await ws.step(plan.valid[0])
        judge_observation(report, step, schema, options, ws.transcript, on_reset=False)
        state = await ws.state()
        report.check(
            step_count(state) == 1,
            "openenv.state.step-count",
            "step_count 1 after one accepted step",
            f"step_count {step_count(state)!r}",
            ws.transcript,
        )

        # Pipelined: all four go out before any reply is read. Whether the steps are
        # refused is for other clauses; here each gets exactly one reply, in order.
        odd = plan.invalid[0][1] if plan.invalid else plan.valid[0]
        for message in (
            {"type": "reset", "data": dict(options.reset)},
            {"type": "step", "data": odd},
            {"type": "step", "data": plan.valid[0]},
            {"type": "state"},
        ):
            await ws.send(message)
        replies = [await ws.reply(f"pipelined message {index + 1}") for index in range(4)]
        kinds = [r.kind for r in replies]
        step_kinds = ("error", "observation")
        in_order = (
            kinds[0] == "observation" and kinds[1] in step_kinds and kinds[2] in step_kinds and kinds[3] == "state"
        )
        report.check(
            in_order,
            "openenv.ws.order",
            "replies: observation, then two error|observation, then state",
            ", ".join(r.kind or r.describe() for r in replies),
            ws.transcript,
        )
        if in_order:
            accepted = kinds[1:3].count("observation")
            report.check(
                step_count(replies[3]) == accepted,
                "openenv.state.step-count",
                f"step_count {accepted} after a reset and {accepted} accepted steps",
                f"step_count {step_count(replies[3])!r}",
                ws.transcript,
            )
        late = await ws.listen(min(ctx.timeout, QUIET_AFTER))
        report.check(
            unprompted_problem(late) is None,
            "openenv.ws.unprompted",
            "no frame after the reply to the last message",
            unprompted_problem(late) or "none came",
            ws.transcript,
        )
    finally:
        await finish(ws, ctx.timeout)


async def actions(ctx: PhaseContext) -> None:
    """Each action of the plan in its own episode: valid ones accepted, invalid ones refused harmlessly."""
    report, options = ctx.report, options_of(ctx)
    schema = await load_schema(ctx)
    plan = action_plan(options, schema)
    if schema is None or not plan.replay:
        why = "no /schema to judge actions by" if schema is None else "no action to replay"
        for clause_id in ACTIONS_CLAUSES:
            report.error(clause_id, why)
        return
    if not plan.invalid:
        for clause_id in ("openenv.action.rejected", "openenv.action.not-executed", "openenv.action.session-usable"):
            report.unsupported(clause_id, "every replayed action is valid by /schema.action")
    for label, action, valid in plan.replay:
        ws = await open_session(ctx, f"{label}: {summarize(action, 80)}")
        try:
            await ws.reset(options.reset)
            before = await ws.state()
            reply = await ws.step(action)
            if valid:
                report.check(
                    reply.kind == "observation",
                    "openenv.schema.action-accepted",
                    "an observation for an action valid by /schema.action",
                    reply.describe(),
                    ws.transcript,
                )
                if reply.kind == "observation":
                    judge_observation(report, reply, schema, options, ws.transcript, on_reset=False)
                continue
            problem = error_problem(reply, "VALIDATION_ERROR", needs_errors_list=True)
            report.check(
                problem is None,
                "openenv.action.rejected",
                f"VALIDATION_ERROR for {label}",
                problem or reply.describe(),
                ws.transcript,
            )
            report.check(
                code_problem(reply) is None,
                "openenv.errors.codes",
                "a known error code and a message",
                code_problem(reply) or reply.describe(),
                ws.transcript,
            )
            after = await ws.state()
            if step_count(before) is None or step_count(after) is None:
                report.error("openenv.action.not-executed", "the state gave no step_count to compare")
            else:
                report.check(
                    step_count(after) == step_count(before),
                    "openenv.action.not-executed",
                    f"step_count stays {step_count(before)}",
                    f"step_count {step_count(after)}",
                    ws.transcript,
                )
            if plan.valid:
                follow = await ws.step(plan.valid[0])
                report.check(
                    follow.kind == "observation",
                    "openenv.action.session-usable",
                    "an observation for the next valid step",
                    follow.describe(),
                    ws.transcript,
                )
        finally:
            await finish(ws, ctx.timeout)


ACTIONS_CLAUSES = (
    "openenv.schema.action-accepted",
    "openenv.action.rejected",
    "openenv.action.not-executed",
    "openenv.action.session-usable",
)


async def errors(ctx: PhaseContext) -> None:
    """Malformed JSON, unknown and missing types, an env crash: each answered, its session kept."""
    report, options = ctx.report, options_of(ctx)
    cases = [
        ("openenv.errors.invalid-json", "INVALID_JSON", "malformed JSON", '{"type": "step", "data": {'),
        ("openenv.errors.unknown-type", "UNKNOWN_TYPE", "an unknown type", '{"type": "rlconform-unknown"}'),
        ("openenv.errors.unknown-type", "UNKNOWN_TYPE", "no type", '{"data": {}}'),
    ]
    if options.crash_action is not None:
        cases.append(
            (
                "openenv.errors.execution",
                "EXECUTION_ERROR",
                "the declared crash action",
                _step_text(options.crash_action),
            )
        )
    else:
        report.unsupported("openenv.errors.execution", "the target declares no crash_action")
    for clause_id, code, what, text in cases:
        ws = await open_session(ctx, f"recoverable error: {what}")
        try:
            await ws.reset(options.reset)
            await ws.send_raw(text, what)
            reply = await ws.reply(what)
            problem = error_problem(reply, code)
            report.check(problem is None, clause_id, f"{code} for {what}", problem or reply.describe(), ws.transcript)
            report.check(
                code_problem(reply) is None,
                "openenv.errors.codes",
                "a known error code and a message",
                code_problem(reply) or reply.describe(),
                ws.transcript,
            )
            again = await ws.reset(options.reset)
            report.check(
                again.kind == "observation",
                clause_id,
                f"the session still answers reset after {what}",
                again.describe(),
                ws.transcript,
            )
        finally:
            await finish(ws, ctx.timeout)


def _step_text(action: object) -> str:
    return json.dumps({"type": "step", "data": action})
