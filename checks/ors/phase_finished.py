"""Sessions > 5 Episode Termination; Data Types > ToolOutput: what a call after finished: true answers."""

from __future__ import annotations

from checks.decision import info, record
from checks.ors.judging_calls import judge_after_finished
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn, tool_call
from checks.ors.stream import output_of, result_of
from checks.ors.survey import finishing_order, given_input, survey

FINISHED_CLAUSES = ("ors.finished.after-finished",)


async def finished_phase(ctx: Ctx) -> None:
    """Each tool likely to end the episode, called until finished: true (at most max_steps times), then once more."""
    async with client(ctx, "after finished") as http:
        await learn(ctx, http)
        names = finishing_order(ctx, await survey(ctx, http))
        for name in names:
            body = tool_call(ctx, name, given_input(ctx, name)) or {"name": name, "input": {}}
            sid = await http.episode(ctx)
            steps = await _calls_to_finish(ctx, http, sid, body)
            if steps:
                _, stream = await http.call(sid, body)
                await http.delete(sid)
                record(ctx.report, judge_after_finished(stream, steps), http.transcript)
                return
            await http.delete(sid)
        tried = ", ".join(names) or "no tool answered ok:true"
        why = f"not judged: no tool answered finished: true within {ctx.options.max_steps} calls (tried {tried})"
        record(ctx.report, info("ors.finished.after-finished", actual=why), http.transcript)


async def _calls_to_finish(ctx: Ctx, http: OrsClient, sid: str, body: dict[str, object]) -> int:
    """How many calls of `body` it took to answer finished: true; 0 when none did (or one was refused)."""
    for steps in range(1, ctx.options.max_steps + 1):
        output = output_of(result_of((await http.call(sid, body))[1])[0])
        if output is None:
            return 0
        if output.get("finished") is True:
            return steps
    return 0
