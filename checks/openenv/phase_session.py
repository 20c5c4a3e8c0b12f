"""One /ws session: quiet, reset with an episode id, state, step, state, four pipelined messages, quiet."""

from __future__ import annotations

from collections.abc import Callable

from checks.core import PhaseStopped, summarize, truncate
from checks.errors import Refused
from checks.openenv.episodes import finish
from checks.openenv.facts import ActionPlan, action_plan, load_schema
from checks.openenv.judging import judge_observation, state_problem, step_count, unprompted_problem
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
        report.failed("openenv.ws.handshake", expected="101 Switching Protocols on GET /ws", actual=str(exc))
        raise PhaseStopped(f"no /ws session could be opened ({truncate(str(exc), 200)})") from None

    def judge_step_count(state: Reply, count: int, after: str) -> None:
        report.check(
            step_count(state) == count,
            "openenv.state.step-count",
            expected=f"step_count {count} {after}",
            actual=f"step_count {step_count(state)!r}",
            evidence=ws.transcript,
        )

    try:
        early = await ws.listen(min(ctx.timeout, QUIET_BEFORE))
        ctx.state.greets = unprompted_problem(early) is not None
        report.check(
            not ctx.state.greets,
            "openenv.ws.unprompted",
            expected="no frame before the first message",
            actual=unprompted_problem(early) or "none came",
            evidence=ws.transcript,
        )
        reset = await ws.reset({**options.reset, "episode_id": episode_id})
        report.check(
            reset.is_json and not reset.binary,
            "openenv.ws.handshake",
            expected="upgraded without subprotocol, and a JSON text frame answering reset",
            actual=reset.describe(),
            evidence=ws.transcript,
        )
        judge_observation(report, reset, schema, options, ws.transcript, on_reset=True)

        state = await ws.state()
        report.check(
            state_problem(state) is None,
            "openenv.state.shape",
            expected="a state frame with step_count >= 0",
            actual=state_problem(state) or summarize(state.data),
            evidence=ws.transcript,
        )
        shown_id = state.data.get("episode_id") if isinstance(state.data, dict) else None
        report.check(
            shown_id == episode_id,
            "openenv.state.episode-id",
            expected=f"episode_id {episode_id!r}",
            actual=f"episode_id {shown_id!r}",
            evidence=ws.transcript,
        )
        judge_step_count(state, 0, "after reset")

        if not plan.valid:
            raise PhaseStopped("no valid action: /schema.action gave none and the options list none")
        step = await ws.step(plan.valid[0])
        judge_observation(report, step, schema, options, ws.transcript, on_reset=False)
        state = await ws.state()
        judge_step_count(state, 1, "after one accepted step")
        _unmirrored(ctx, ws)

        await _pipelined(ctx, ws, plan, judge_step_count)
        late = await ws.listen(min(ctx.timeout, QUIET_AFTER))
        report.check(
            unprompted_problem(late) is None,
            "openenv.ws.unprompted",
            expected="no frame after the reply to the last message",
            actual=unprompted_problem(late) or "none came",
            evidence=ws.transcript,
        )
    finally:
        await finish(ws, ctx.timeout)


def _unmirrored(ctx: Ctx, ws: JsonSession) -> None:
    """openenv.ws.metadata-mirror not judged, with this transcript, when no frame so far mirrored metadata."""
    if not any(clause_id == "openenv.ws.metadata-mirror" for _, clause_id in ctx.report.results):
        ctx.report.info(
            "openenv.ws.metadata-mirror",
            actual="not judged: no frame carried metadata both in data.observation and at the top of data",
            evidence=ws.transcript,
        )


async def _pipelined(
    ctx: Ctx, ws: JsonSession, plan: ActionPlan, judge_step_count: Callable[[Reply, int, str], None]
) -> None:
    """Reset, an odd step, a valid step and state sent at once: one reply each, in order."""
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
    replies = [await ws.reply(f"pipelined message {index + 1}") for index in range(4)]
    kinds = [r.kind for r in replies]
    step_kinds = ("error", "observation")
    in_order = kinds[0] == "observation" and kinds[1] in step_kinds and kinds[2] in step_kinds and kinds[3] == "state"
    ctx.report.check(
        in_order,
        "openenv.ws.order",
        expected="replies: observation, then two error|observation, then state",
        actual=", ".join(r.kind or r.describe() for r in replies),
        evidence=ws.transcript,
    )
    if in_order:
        accepted = kinds[1:3].count("observation")
        judge_step_count(replies[3], accepted, f"after a reset and {accepted} accepted steps")
