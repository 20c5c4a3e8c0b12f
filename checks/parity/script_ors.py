"""The ors parity script: the same tasks and the same tool calls on two deployments give the same blocks and rewards.

For each of the first `tasks` tasks of the split, one session: its prompt,
then the calls of the options (default: the first tool with an input made from
its schema, up to `max_steps` times or until finished). Each call is recorded
as its parsed RunToolOutput (blocks, reward, finished, metadata), or the error
event's text; task ids are random per call, so they are not recorded.
"""

from __future__ import annotations

from typing import Any

import pydantic

from checks.core import PhaseContext, Report
from checks.ors.options import OrsOptions, OrsState
from checks.ors.routes import client, close_state, learn, tool_call
from checks.ors.stream import result_of
from checks.parity.script import ExactScript, NotRecorded, Observed, ParityOptions


class OrsParityOptions(ParityOptions):
    env: str | None = pydantic.Field(None, description="Environment to drive; None: the first listed.")
    split: str | None = pydantic.Field(None, description="Split whose tasks run; None: the first listed.")
    tasks: int = pydantic.Field(
        2, ge=1, le=100, description="Tasks run, indices 0 to tasks - 1 (fewer if the split is short)."
    )
    calls: list[dict[str, Any]] | None = pydantic.Field(
        None, description='Tool calls per task, [{"name": ..., "input": {...}}]; None: the first tool, made input.'
    )
    max_steps: int = pydantic.Field(8, ge=1, le=200, description="Most calls per task when `calls` is None.")


def call_record(stream_result: tuple[Any, str], error: str | None) -> Any:
    result, problem = stream_result
    if problem:
        return {"no_result": error if error is not None else problem.split(":")[0]}
    return result


class OrsScript(ExactScript):
    kind = "ors"
    version = "1"
    options_model = OrsParityOptions
    recorded_inputs = frozenset({"env", "split", "tasks", "calls", "max_steps"})

    async def observe(self, url: str, options: OrsParityOptions, report: Report) -> Observed:
        suite_options = OrsOptions(timeout=options.timeout, env=options.env, split=options.split)
        ctx = PhaseContext(url, suite_options, report, OrsState())
        try:
            return await self._observe(ctx, options)
        finally:
            await close_state(ctx.state)

    async def _observe(self, ctx: PhaseContext[OrsOptions, OrsState], options: OrsParityOptions) -> Observed:
        async with client(ctx, "parity") as http:
            await learn(ctx, http)
            count = await http.post(f"/{http.env}/num_tasks", {"split": ctx.state.split})
            total = count.body.get("num_tasks") if isinstance(count.body, dict) else None
            indices = range(min(options.tasks, total if isinstance(total, int) else options.tasks))
            made = tool_call(ctx, None, None)
            planned = options.calls or ([made] if made is not None else [])
            if not planned:
                raise NotRecorded("no tool to call: give `calls`, or serve a tool list")
            episodes: list[dict[str, Any]] = []
            for index in indices:
                sid = await http.new_sid()
                created = await http.create(sid, {"env_name": http.env, "split": ctx.state.split, "index": index})
                if created.status != 200:
                    raise NotRecorded(f"/create refused task {index}: {created.describe(120)}")
                prompt = await http.prompt(sid)
                calls = []
                for step in range(len(planned) if options.calls else options.max_steps):
                    _, stream = await http.call(sid, planned[step % len(planned)])
                    calls.append(call_record(result_of(stream), stream.first("error")))
                    output = calls[-1].get("output") if isinstance(calls[-1], dict) else None
                    if options.calls is None and isinstance(output, dict) and output.get("finished") is True:
                        break
                await http.delete(sid)
                episodes.append(
                    {"index": index, "prompt": prompt.body if prompt.is_json else prompt.text, "calls": calls}
                )
        steps = sum(len(episode["calls"]) for episode in episodes)
        values = {"env": ctx.state.env, "split": ctx.state.split, "plan": planned, "episodes": episodes}
        return Observed(values, summary=f"{len(episodes)} tasks, {steps} tool calls in all")


SCRIPT = OrsScript()
