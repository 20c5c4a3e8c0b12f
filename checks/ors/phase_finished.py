"""Sessions > 5 Episode Termination; Data Types > ToolOutput: what a call after finished: true answers."""

from __future__ import annotations

from typing import Any

from checks.decision import info, missed, passed, record
from checks.errors import PhaseStopped
from checks.ors.judging import result_of
from checks.ors.options import Ctx
from checks.ors.routes import client, learn, tool_call

FINISHED_CLAUSES = ("ors.finished.after-finished",)


def output_of(result: Any) -> dict[str, Any] | None:
    output = result.get("output") if isinstance(result, dict) and result.get("ok") is True else None
    return output if isinstance(output, dict) else None


async def finished_phase(ctx: Ctx) -> None:
    clause = "ors.finished.after-finished"
    async with client(ctx, "after finished") as http:
        await learn(ctx, http)
        body = tool_call(ctx, None, ctx.options.tool_input)
        if body is None:
            raise PhaseStopped("the env lists no tool to call", http.transcript)
        sid = await http.episode(ctx)
        steps = 0
        finished = False
        while steps < ctx.options.max_steps and not finished:
            steps += 1
            output = output_of(result_of((await http.call(sid, body))[1])[0])
            if output is None:
                break
            finished = output.get("finished") is True
        if not finished:
            await http.delete(sid)
            why = f"not judged: {body['name']} did not answer finished: true within {steps} calls"
            record(ctx.report, info(clause, actual=why), http.transcript)
            return
        _, stream = await http.call(sid, body)
        await http.delete(sid)
    result, problem = result_of(stream)
    after = output_of(result)
    expected = "refused (ok:false or a 4xx), or run without a reward"
    if after is None:
        decision = passed(
            clause,
            actual=f"after {steps} calls, finished; the next was refused: {problem or 'ok:false'}",
            expected=expected,
        )
    elif after.get("reward") is None:
        decision = info(clause, actual=f"after {steps} calls, finished; the next call ran without a reward")
    else:
        decision = missed(
            clause, expected=expected, actual=f"the call after finished ran and rewarded {after['reward']!r}"
        )
    record(ctx.report, decision, http.transcript)
