"""Which tools the env has and what each answers: the calls the call clauses are decided on, with defaults.

The tools are the env's listed ones (GET /{env}/tools) and a session's
(GET /{env}/task_tools, where the server has it). Each is called once in a
session of its own with an input made from its input_schema (`inputs.plain_input`,
or the options' input for a tool they name), so a tool that ends the episode or
raises spoils no other call. The options only narrow: `tool` picks the tool the
phases drive, the `*_tool` options name the tool for one clause.
"""

from __future__ import annotations

from typing import Any

from checks.errors import CheckError, Malformed, PeerClosed, PhaseStopped, TargetUnreachable
from checks.http_client import reason_of
from checks.ors.inputs import breaking_input, plain_input, sized_input
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient
from checks.ors.stream import ToolCall, output_of, result_of

SURVEYED = 8  # listed tools called at most (each in its own session)


async def call_once(ctx: Ctx, http: OrsClient, body: dict[str, Any]) -> ToolCall:
    """`body` called in a new session (deleted after); a call with no usable answer says why instead."""
    sid = await http.episode(ctx)
    try:
        reply, stream = await http.call(sid, body, raising=True)
        return ToolCall(body, reply, stream)
    except TargetUnreachable:
        raise
    except CheckError as exc:
        return ToolCall(body, None, failure=reason_of(exc), broken=isinstance(exc, (Malformed, PeerClosed)))
    finally:
        await http.delete(sid)


async def learn_task_tools(ctx: Ctx, http: OrsClient) -> None:
    """Add a session's tools (GET /{env}/task_tools) to the listed ones; a server without the route adds none."""
    if ctx.state.task_tools_asked:
        return
    ctx.state.task_tools_asked = True
    sid = await http.episode(ctx)
    reply = await http.get(f"/{http.env}/task_tools", headers=http.session(sid))
    await http.delete(sid)
    specs = reply.body.get("tools") if reply.status == 200 and isinstance(reply.body, dict) else None
    for spec in specs if isinstance(specs, list) else []:
        if isinstance(spec, dict) and isinstance(spec.get("name"), str):
            ctx.state.tools.setdefault(spec["name"], spec)


def given_input(ctx: Ctx, name: str) -> dict[str, Any] | None:
    """The input the options give for tool `name`, if they name it."""
    options = ctx.options
    named = {
        options.tool: options.tool_input,
        options.raising_tool: options.raising_input,
        options.big_output_tool: options.big_output_input,
    }
    return named.get(name)


def schema_of(ctx: Ctx, name: str) -> Any:
    return ctx.state.tools.get(name, {}).get("input_schema")


async def survey(ctx: Ctx, http: OrsClient) -> list[ToolCall]:
    """Each tool called once (memoised for the run); the run's tool is then the first that answered ok:true."""
    if ctx.state.survey is None:
        await learn_task_tools(ctx, http)
        if not ctx.state.tools:
            raise PhaseStopped("the env lists no tool, shared or in a session's task_tools", http.transcript)
        calls = []
        for name in list(ctx.state.tools)[:SURVEYED]:
            given = given_input(ctx, name)
            made = given if given is not None else plain_input(schema_of(ctx, name))
            calls.append(await call_once(ctx, http, {"name": name, "input": made}))
        ctx.state.survey = calls
        answered = [call.name for call in calls if call.outcome() == "ok"]
        ctx.state.tool = ctx.options.tool or next(iter(answered), None) or calls[0].name
    return ctx.state.survey


def finishing_order(ctx: Ctx, calls: list[ToolCall]) -> list[str]:
    """Tools to drive to finished: true, most likely first (seen finished, then rewarded, then ok)."""
    if ctx.options.tool:
        return [ctx.options.tool]

    def rank(call: ToolCall) -> int:
        output = output_of(result_of(call.stream)[0]) or {}
        return 0 if output.get("finished") is True else 1 if output.get("reward") is not None else 2

    return [call.name for call in sorted((c for c in calls if c.outcome() == "ok"), key=rank)][:3]


def sized_calls(ctx: Ctx, calls: list[ToolCall]) -> list[dict[str, Any]]:
    """Calls most likely to answer over 4 KB: the options' big-output tool, else each tool that answered ok,
    with its strings and integers as large as its schema allows."""
    if ctx.options.big_output_tool:
        name = ctx.options.big_output_tool
        given = given_input(ctx, name)
        return [{"name": name, "input": given if given is not None else sized_input(schema_of(ctx, name)) or {}}]
    made = [(call.name, sized_input(schema_of(ctx, call.name))) for call in calls if call.outcome() == "ok"]
    return [{"name": name, "input": given} for name, given in made if given is not None]


def breaking_call(ctx: Ctx, calls: list[ToolCall]) -> dict[str, Any] | None:
    """A call whose input the tool's schema refuses: the run's tool first, then the others."""
    names = [ctx.state.tool] + [call.name for call in calls if call.outcome() == "ok"]
    for name in dict.fromkeys(name for name in names if name):
        breaking = breaking_input(schema_of(ctx, name))
        if breaking is not None:
            return {"name": name, "input": breaking}
    return None
