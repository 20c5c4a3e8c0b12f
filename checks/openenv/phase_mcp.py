"""POST /mcp with bodies that are not JSON-RPC 2.0 requests: each answered with a JSON-RPC 2.0 error.

JSON-RPC 2.0 itself requires an error response for unparsable JSON and for
an invalid request, so a 500 or a non-JSON-RPC answer fails; which code the
error carries is openenv-core's habit as much as the standard's, so a SHOULD.
"""

from __future__ import annotations

from typing import Any

from checks.http_client import HttpClient, Reply
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
