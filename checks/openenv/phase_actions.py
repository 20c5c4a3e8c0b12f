"""Each action of the plan in its own episode: valid ones accepted, invalid ones refused without effect.

Then every property /schema.action advertises, optional ones included, set
in turn on a valid action: the schema promises that each is accepted.
"""

from __future__ import annotations

from typing import Any

from checks.core import PhaseStopped, Transcript, summarize
from checks.decision import record
from checks.openenv import judging_sessions as judge
from checks.openenv.action_values import property_actions, valid_action
from checks.openenv.episodes import finish
from checks.openenv.facts import action_plan, load_schema
from checks.openenv.judging import error_code_decision, observation_decisions, rewards_seen
from checks.openenv.options import Ctx
from checks.openenv.session import JsonSession, Reply, open_session


async def actions_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    schema = await load_schema(ctx)
    plan = action_plan(options, schema)
    if schema is None or not plan.replay:
        raise PhaseStopped("no /schema to judge actions by" if schema is None else "no action to replay")
    if not plan.invalid:
        record(report, judge.no_invalid_action())
    accepted: list[Reply] = []
    evidence: list[Transcript] = []
    try:
        for label, action, valid in plan.replay:
            ws = await open_session(ctx, f"{label}: {summarize(action, 80)}")
            evidence.append(ws.transcript)
            try:
                accepted += await _replay(ctx, ws, schema, (label, action, valid), plan.valid)
            finally:
                await finish(ws, ctx.timeout)
        base = plan.valid[0] if plan.valid else valid_action(schema["action"])
        if isinstance(base, dict):
            accepted += await _exercise_properties(ctx, schema, base)
    finally:
        record(report, rewards_seen(accepted, options), evidence)


async def _replay(
    ctx: Ctx, ws: JsonSession, schema: dict[str, Any], replayed: tuple[str, Any, bool], valid: list[Any]
) -> list[Reply]:
    """One action in its own episode: a valid one accepted, an invalid one refused without effect."""
    report, evidence = ctx.report, ws.transcript
    label, action, is_valid = replayed
    await ws.reset(ctx.options.reset)
    before = await ws.state()
    reply = await ws.step(action)
    if is_valid:
        record(report, judge.action_accepted(reply), evidence)
        if reply.kind != "observation":
            return []
        record(report, observation_decisions(reply, schema, ctx.options, on_reset=False), evidence)
        return [reply]
    record(report, [judge.rejected(reply, label), error_code_decision(reply)], evidence)
    after = await ws.state()
    record(report, judge.not_executed(before, after), evidence)
    if valid:
        follow = await ws.step(valid[0])
        record(report, judge.session_usable(follow), evidence)
    return []


async def _exercise_properties(ctx: Ctx, schema: dict[str, Any], base: dict[str, Any]) -> list[Reply]:
    """Each advertised property set on `base`, each in its own episode; a refusal names the property.

    EXECUTION_ERROR counts as accepted: the action passed validation and the
    environment itself declined the value, which the schema cannot promise.
    """
    report, options = ctx.report, ctx.options
    actions, skipped = property_actions(schema["action"], base)
    observed: list[Reply] = []
    for name, action in actions:
        ws = await open_session(ctx, f"property {name!r}: {summarize(action, 80)}")
        if skipped:
            ws.transcript.note("properties not exercised (no value sure to be valid): " + "; ".join(skipped))
        try:
            await ws.reset(options.reset)
            reply = await ws.step(action)
        finally:
            await finish(ws, ctx.timeout)
        record(report, judge.property_accepted(name, action[name], reply), ws.transcript)
        if reply.kind == "observation":
            record(report, observation_decisions(reply, schema, options, on_reset=False), ws.transcript)
            observed.append(reply)
    return observed
