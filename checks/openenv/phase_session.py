"""One /ws session: quiet, reset with an episode id, state, step, state, four pipelined messages, quiet."""

from __future__ import annotations

from checks.core import PhaseStopped, truncate
from checks.decision import record
from checks.errors import Refused
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish
from checks.openenv.facts import ActionPlan, action_plan, load_schema
from checks.openenv.judging import observation_decisions, rewards_seen, unprompted_problem
from checks.openenv.options import Ctx
from checks.openenv.session import QUIET_BEFORE, JsonSession, Reply, connect_session

# How long the session listens after its last reply for frames nobody asked for: longer than the
# wait for a greeting, so that an application-level heartbeat on idle sockets shows too.
QUIET_AFTER = 1.0


async def session_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    schema = await load_schema(ctx)
    plan = action_plan(options, schema)
    episode_id = "rlconform-episode-1"
    try:
        ws = await connect_session(ctx, "reset, state, step, state, pipelined")
    except Refused as exc:
        record(report, judge.handshake_refused(str(exc)))
        raise PhaseStopped(f"no /ws session could be opened ({truncate(str(exc), 200)})") from None
    evidence = ws.transcript
    steps: list[Reply] = []
    try:
        early = await ws.listen(min(ctx.timeout, QUIET_BEFORE))
        ctx.state.greets = unprompted_problem(early) is not None
        record(report, judge.unprompted(early, "before the first message"), evidence)
        reset = await ws.reset({**options.reset, "episode_id": episode_id})
        record(report, judge.handshake(reset), evidence)
        record(report, observation_decisions(reset, schema, options, on_reset=True), evidence)

        state = await ws.state()
        record(report, [judge.state_shape(state), judge.episode_id(state, episode_id)], evidence)
        record(report, judge.step_count_is(state, 0, "after reset"), evidence)

        if not plan.valid:
            raise PhaseStopped("no valid action: /schema.action gave none and the options list none")
        steps.append(await ws.step(plan.valid[0]))
        record(report, observation_decisions(steps[0], schema, options, on_reset=False), evidence)
        state = await ws.state()
        record(report, judge.step_count_is(state, 1, "after one accepted step"), evidence)
        if not any(clause_id == "openenv.ws.metadata-mirror" for _, clause_id in report.results):
            record(report, judge.metadata_unmirrored(), evidence)

        replies = await _pipelined(ctx, ws, plan)
        steps += replies[1:3]
        record(report, judge.pipelined(replies), evidence)
        late = await ws.listen(min(ctx.timeout, QUIET_AFTER))
        record(report, judge.unprompted(late, "after the reply to the last message"), evidence)
    finally:
        record(report, rewards_seen(steps, options), evidence)
        await finish(ws, ctx.timeout)


async def _pipelined(ctx: Ctx, ws: JsonSession, plan: ActionPlan) -> list[Reply]:
    """Reset, an odd step, a valid step and state sent at once: the four replies, as they came."""
    # Pipelined: all four go out before any reply is read. Whether the steps are
    # refused is for other clauses; here each gets exactly one reply, in order.
    odd = plan.invalid[0][1] if plan.invalid else plan.valid[0]
    for message in (
        {"type": "reset", "data": dict(ctx.options.reset)},
        {"type": "step", "data": odd},
        {"type": "step", "data": plan.valid[0]},
        {"type": "state"},
    ):
        await ws.send(message)
    return [await ws.reply(f"pipelined message {index + 1}") for index in range(4)]
