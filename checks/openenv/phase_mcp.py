"""POST /mcp with unparsable and invalid requests: each answered with its JSON-RPC 2.0 error."""

from __future__ import annotations

from checks.openenv.facts import load_openapi_paths
from checks.openenv.http_probe import HttpProbe
from checks.openenv.options import Ctx


async def mcp_phase(ctx: Ctx) -> None:
    report = ctx.report
    paths = await load_openapi_paths(ctx)
    if paths is None or "/mcp" not in paths:
        report.unsupported("openenv.mcp.jsonrpc", "no /mcp in the OpenAPI paths")
        return
    async with HttpProbe(ctx.url, report.transcript("POST /mcp"), ctx.timeout) as probe:
        for what, raw, code in (("unparsable JSON", "not json at all", -32700), ("an empty object", "{}", -32600)):
            reply = await probe.post("/mcp", raw=raw)
            body = reply.body if isinstance(reply.body, dict) else {}
            error = body.get("error")
            error_code = error.get("code") if isinstance(error, dict) else None
            report.check(
                reply.status == 200 and body.get("jsonrpc") == "2.0" and error_code == code,
                "openenv.mcp.jsonrpc",
                expected=f"200 JSON-RPC 2.0 error {code} for {what}",
                actual=reply.describe(),
                evidence=probe.transcript,
            )
