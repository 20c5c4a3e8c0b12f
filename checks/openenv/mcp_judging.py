"""Pure judgements of OpenEnv's POST /mcp answers: JSON-RPC 2.0 error responses, the missing-name code,
and how tools/list spells each tool's schema."""

from __future__ import annotations

from typing import Any

from checks.decision import Decision, check, info, unsupported
from checks.http_client import Reply

INVALID_PARAMS = -32602


def bad_body(reply: Reply, what: str, code: int) -> list[Decision]:
    """openenv.mcp.error-object and openenv.mcp.error-code on the answer to a body that is no JSON-RPC request."""
    problem = error_response_problem(reply)
    decisions = [
        check(
            problem is None,
            "openenv.mcp.error-object",
            expected=f"a JSON-RPC 2.0 error response (no 5xx) for {what}",
            actual=problem or reply.describe(),
        )
    ]
    if problem is not None:
        why = f"not judged, because {what} got no JSON-RPC error (see openenv.mcp.error-object)"
        return [*decisions, info("openenv.mcp.error-code", actual=why)]
    body: dict[str, Any] = reply.body
    held = reply.status == 200 and body["error"]["code"] == code and body.get("id", "absent") is None
    return [
        *decisions,
        check(
            held,
            "openenv.mcp.error-code",
            expected=f"200 with error code {code} and id null for {what}",
            actual=reply.describe(),
        ),
    ]


def missing_name(reply: Reply, has_tools: bool) -> list[Decision]:
    """tools/call without a name: a JSON-RPC error (error-object), -32602 (missing-name).

    -32602 passes anywhere; another code is judged only on an env that serves MCP tools:
    openenv-core 0.3 answers a non-MCP env's tools/call -32603 "does not support MCP" before
    looking at the params, so no tool could be called there at all."""
    problem = error_response_problem(reply)
    decisions = [
        check(
            problem is None,
            "openenv.mcp.error-object",
            expected="a JSON-RPC 2.0 error response (no 5xx) for tools/call without a name",
            actual=problem or reply.describe(),
        )
    ]
    if problem is not None:
        return decisions
    code = reply.body["error"]["code"]
    if code != INVALID_PARAMS and not has_tools:
        why = f"not judged: the env lists no MCP tools, and answers error code {code}"
        return [*decisions, info("openenv.mcp.missing-name", actual=why)]
    return [
        *decisions,
        check(
            code == INVALID_PARAMS,
            "openenv.mcp.missing-name",
            expected=f"error code {INVALID_PARAMS} (invalid params) for tools/call without a name",
            actual=f"error code {code}: {reply.describe()}",
        ),
    ]


def input_schemas(reply: Reply) -> list[Decision]:
    """openenv.mcp.input-schema on each tool tools/list lists (unsupported when it lists none)."""
    result = reply.body.get("result") if reply.is_json and isinstance(reply.body, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    if not isinstance(tools, list) or not tools:
        why = "tools/list lists no tools" + ("" if isinstance(tools, list) else f": {reply.describe()}")
        return [unsupported("openenv.mcp.input-schema", why)]
    decisions = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        spelled = isinstance(tool, dict) and isinstance(tool.get("inputSchema"), dict)
        snake = isinstance(tool, dict) and "input_schema" in tool
        missing = "input_schema instead of inputSchema" if snake else "no inputSchema"
        decisions.append(
            check(
                spelled,
                "openenv.mcp.input-schema",
                expected=f"tool {name!r} with an inputSchema object",
                actual="inputSchema" if spelled else missing,
            )
        )
    return decisions


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
