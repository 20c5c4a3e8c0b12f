"""POST /mcp with bodies that are not JSON-RPC 2.0 requests: each answered with a JSON-RPC 2.0 error.

JSON-RPC 2.0 itself requires an error response for unparsable JSON and for
an invalid request, so a 500 or a non-JSON-RPC answer fails; which code the
error carries is openenv-core's habit as much as the standard's, so a SHOULD.
Then tools/call without a name (invalid params: -32602, as OpenEnv 0.10 answers
on every env) and tools/list, whose tools MCP spells with `inputSchema`. No
session is opened here: an HTTP MCP session would hold a slot until closed.
"""

from __future__ import annotations

from checks.decision import record, unsupported
from checks.http_client import HttpClient
from checks.openenv import mcp_judging as judge
from checks.openenv.options import Ctx

NOT_SERVED = (404, 405)  # no POST /mcp here: MCP is an optional part of an OpenEnv server
BAD_BODIES = (("unparsable JSON", "not json at all", -32700), ("an empty object", "{}", -32600))


async def mcp_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with HttpClient(ctx.url, report.transcript("POST /mcp"), ctx.timeout, ctx.options) as probe:
        for what, raw, code in BAD_BODIES:
            reply = await probe.post("/mcp", raw=raw)
            if reply.status in NOT_SERVED:
                why = f"POST /mcp answers {reply.status}: the server offers no MCP endpoint"
                clause_ids = ("openenv.mcp.error-object", "openenv.mcp.error-code")
                record(report, [unsupported(clause_id, why) for clause_id in clause_ids], probe.transcript)
                return
            record(report, judge.bad_body(reply, what, code), probe.transcript)
        has_tools = await _tool_schemas(ctx, probe)
        await _call_without_name(ctx, probe, has_tools)


async def _call_without_name(ctx: Ctx, probe: HttpClient, has_tools: bool) -> None:
    """-32602 passes anywhere; another code is judged only on an env that serves MCP tools.

    openenv-core 0.3 answers a non-MCP env's tools/call -32603 "does not support
    MCP" before looking at the params: no tool could be called there at all."""
    report = ctx.report
    reply = await probe.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
    record(report, judge.missing_name(reply, has_tools), probe.transcript)


async def _tool_schemas(ctx: Ctx, probe: HttpClient) -> bool:
    """Judge the spelling of each tool's schema; whether tools/list listed any tool."""
    report = ctx.report
    reply = await probe.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    decisions = judge.input_schemas(reply)
    record(report, decisions, probe.transcript)
    return decisions[0].outcome != "unsupported"
