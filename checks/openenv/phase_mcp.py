"""POST /mcp with bodies that are not JSON-RPC 2.0 requests: each answered with a JSON-RPC 2.0 error.

JSON-RPC 2.0 itself requires an error response for unparsable JSON and for
an invalid request, so a 500 or a non-JSON-RPC answer fails; which code the
error carries is openenv-core's habit as much as the standard's, so a SHOULD.
Then tools/call without a name (invalid params: -32602, as OpenEnv 0.10 answers
on every env) and tools/list, whose tools MCP spells with `inputSchema`. No
session is opened here: an HTTP MCP session would hold a slot until closed.
"""

from __future__ import annotations

from typing import Any

from checks.http_client import HttpClient, Reply
from checks.openenv.options import Ctx

NOT_SERVED = (404, 405)  # no POST /mcp here: MCP is an optional part of an OpenEnv server
INVALID_PARAMS = -32602
BAD_BODIES = (("unparsable JSON", "not json at all", -32700), ("an empty object", "{}", -32600))


async def mcp_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with HttpClient(ctx.url, report.transcript("POST /mcp"), ctx.timeout, ctx.options) as probe:
        for what, raw, code in BAD_BODIES:
            reply = await probe.post("/mcp", raw=raw)
            if reply.status in NOT_SERVED:
                why = f"POST /mcp answers {reply.status}: the server offers no MCP endpoint"
                report.unsupported("openenv.mcp.error-object", why, probe.transcript)
                report.unsupported("openenv.mcp.error-code", why, probe.transcript)
                return
            problem = error_response_problem(reply)
            report.check(
                problem is None,
                "openenv.mcp.error-object",
                expected=f"a JSON-RPC 2.0 error response (no 5xx) for {what}",
                actual=problem or reply.describe(),
                evidence=probe.transcript,
            )
            if problem is not None:
                report.info(
                    "openenv.mcp.error-code",
                    actual=f"not judged, because {what} got no JSON-RPC error (see openenv.mcp.error-object)",
                    evidence=probe.transcript,
                )
                continue
            body: dict[str, Any] = reply.body
            report.check(
                reply.status == 200 and body["error"]["code"] == code and body.get("id", "absent") is None,
                "openenv.mcp.error-code",
                expected=f"200 with error code {code} and id null for {what}",
                actual=reply.describe(),
                evidence=probe.transcript,
            )
        has_tools = await _tool_schemas(ctx, probe)
        await _call_without_name(ctx, probe, has_tools)


async def _call_without_name(ctx: Ctx, probe: HttpClient, has_tools: bool) -> None:
    """-32602 passes anywhere; another code is judged only on an env that serves MCP tools.

    openenv-core 0.3 answers a non-MCP env's tools/call -32603 "does not support
    MCP" before looking at the params: no tool could be called there at all."""
    report = ctx.report
    reply = await probe.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
    problem = error_response_problem(reply)
    report.check(
        problem is None,
        "openenv.mcp.error-object",
        expected="a JSON-RPC 2.0 error response (no 5xx) for tools/call without a name",
        actual=problem or reply.describe(),
        evidence=probe.transcript,
    )
    if problem is None:
        code = reply.body["error"]["code"]
        if code != INVALID_PARAMS and not has_tools:
            report.info(
                "openenv.mcp.missing-name",
                actual=f"not judged: the env lists no MCP tools, and answers error code {code}",
                evidence=probe.transcript,
            )
            return
        report.check(
            code == INVALID_PARAMS,
            "openenv.mcp.missing-name",
            expected=f"error code {INVALID_PARAMS} (invalid params) for tools/call without a name",
            actual=f"error code {code}: {reply.describe()}",
            evidence=probe.transcript,
        )


async def _tool_schemas(ctx: Ctx, probe: HttpClient) -> bool:
    """Judge the spelling of each tool's schema; whether tools/list listed any tool."""
    report = ctx.report
    reply = await probe.post("/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    result = reply.body.get("result") if reply.is_json and isinstance(reply.body, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or not tools:
        why = "tools/list lists no tools" + ("" if isinstance(tools, list) else f": {reply.describe()}")
        report.unsupported("openenv.mcp.input-schema", why, probe.transcript)
        return False
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        spelled = isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict)
        snake = isinstance(tool, dict) and "input_schema" in tool
        report.check(
            spelled,
            "openenv.mcp.input-schema",
            expected=f"tool {name!r} with an inputSchema object",
            actual=("input_schema instead of inputSchema" if snake else "no inputSchema")
            if not spelled
            else "inputSchema",
            evidence=probe.transcript,
        )
    return True


def error_response_problem(reply: Reply) -> str | None:
    """Why `reply` is not a JSON-RPC 2.0 error response, or None when it is one."""
    if reply.status == 0 or reply.status >= 500:
        return f"a server error instead of a JSON-RPC error: {reply.describe()}"
    body = reply.body
    if not reply.is_json or not isinstance(body, dict):
        return f"not a JSON object: {reply.describe()}"
    if body.get("jsonrpc") != "2.0":
        return f'jsonrpc is not "2.0": {reply.describe()}'
    error = body.get("error")
    if not isinstance(error, dict) or "result" in body:
        return f"no error object (or a result beside it): {reply.describe()}"
    code, message = error.get("code"), error.get("message")
    if not isinstance(code, int) or isinstance(code, bool) or not isinstance(message, str):
        return f"the error object lacks an integer code or a string message: {reply.describe()}"
    return None
