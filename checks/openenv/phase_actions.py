"""Each action of the plan in its own episode: valid ones accepted, invalid ones refused without effect.

Then every property /schema.action advertises, optional ones included, set
in turn on a valid action: the schema promises that each is accepted.
"""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped, summarize
from checks.openenv.action_values import property_actions, valid_action
from checks.openenv.episodes import finish
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import error_problem, judge_error_code, judge_observation, step_count
from checks.openenv.options import Ctx
from checks.openenv.session import open_session


async def actions_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    schema = await load_schema(ctx)
    plan = action_plan(options, schema)
    if schema is None or not plan.replay:
        raise PhaseStopped("no /schema to judge actions by" if schema is None else "no action to replay")
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
                accepted = reply.kind == "observation"
                report.check(
                    accepted,
                    "openenv.schema.action-accepted",
                    expected="an observation for an action valid by /schema.action",
                    actual=reply.describe(),
                    evidence=ws.transcript,
                )
                if accepted:
                    judge_observation(report, reply, schema, options, ws.transcript, on_reset=False)
                continue
            problem = error_problem(reply, "VALIDATION_ERROR", needs_errors_list=True)
            report.check(
                problem is None,
                "openenv.action.rejected",
                expected=f"VALIDATION_ERROR for {label}",
                actual=problem or reply.describe(),
                evidence=ws.transcript,
            )
            judge_error_code(report, reply, ws.transcript)
            after = await ws.state()
            if step_count(before) is None or step_count(after) is None:
                report.error("openenv.action.not-executed", "the state gave no step_count to compare")
            else:
                report.check(
                    step_count(after) == step_count(before),
                    "openenv.action.not-executed",
                    expected=f"step_count stays {step_count(before)}",
                    actual=f"step_count {step_count(after)}",
                    evidence=ws.transcript,
                )
            if plan.valid:
                follow = await ws.step(plan.valid[0])
                report.check(
                    follow.kind == "observation",
                    "openenv.action.session-usable",
                    expected="an observation for the next valid step",
                    actual=follow.describe(),
                    evidence=ws.transcript,
                )
        finally:
            await finish(ws, ctx.timeout)
    base = plan.valid[0] if plan.valid else valid_action(schema["action"])
    if isinstance(base, dict):
        await _exercise_properties(ctx, schema, base)


async def _exercise_properties(ctx: Ctx, schema: dict[str, Any], base: dict[str, Any]) -> None:
    """Each advertised property set on `base`, each in its own episode; a refusal names the property.

    EXECUTION_ERROR counts as accepted: the action passed validation and the
    environment itself declined the value, which the schema cannot promise.
    """
    report, options = ctx.report, ctx.options
    actions, skipped = property_actions(schema["action"], base)
    for name, action in actions:
        ws = await open_session(ctx, f"property {name!r}: {summarize(action, 80)}")
        if skipped:
            ws.transcript.note("properties not exercised (no value sure to be valid): " + "; ".join(skipped))
        try:
            await ws.reset(options.reset)
            reply = await ws.step(action)
        finally:
            await finish(ws, ctx.timeout)
        accepted = reply.kind == "observation" or reply.code == "EXECUTION_ERROR"
        value = summarize(action[name], 80)
        report.check(
            accepted,
            "openenv.schema.action-accepted",
            expected=f"an observation for an action /schema.action admits, with property {name!r} = {value}",
            actual=f"property {name!r} = {value} " + ("accepted" if accepted else f"refused: {reply.describe()}"),
            evidence=ws.transcript,
        )
        if reply.kind == "observation":
            judge_observation(report, reply, schema, options, ws.transcript, on_reset=False)
