"""HTTP in simulation mode, and the MCP JSON-RPC endpoint."""

from __future__ import annotations

from typing import Any

from checks.core import PhaseContext
from checks.openenv.facts import action_plan, load_openapi_paths, load_schema
from checks.openenv.http_probe import HttpProbe, HttpReply
from checks.openenv.options import options_of

HTTP_CLAUSES = ("openenv.http.reset", "openenv.http.step", "openenv.http.invalid-action", "openenv.http.crash-response")


def _result_problem(reply: HttpReply) -> str | None:
    """What keeps a /reset or /step answer from being 200 {observation, reward, done}."""
    if reply.status != 200 or not isinstance(reply.body, dict):
        return f"answered {reply.describe()}"
    if not isinstance(reply.body.get("observation"), dict):
        return "observation is not an object"
    if not isinstance(reply.body.get("done"), bool):
        return f"done is {reply.body.get('done')!r}, not a boolean"
    if "reward" not in reply.body:
        return "no reward key"
    return None


async def http(ctx: PhaseContext) -> None:
    """POST /reset and /step each stand alone (the reference server keeps no state between them)."""
    report, options = ctx.report, options_of(ctx)
    paths = await load_openapi_paths(ctx)
    if paths is None or not {"/reset", "/step"} <= paths:
        for clause_id in HTTP_CLAUSES:
            report.unsupported(clause_id, "the server is not in simulation mode (no /reset and /step in OpenAPI)")
        return
    plan = action_plan(options, await load_schema(ctx))
    async with HttpProbe(ctx.url, report.transcript("HTTP /reset and /step"), ctx.timeout) as probe:
        evidence = probe.transcript
        reset = await probe.post("/reset", _http_reset(options.reset))
        problem = _result_problem(reset)
        report.check(
            problem is None,
            "openenv.http.reset",
            "200 {observation, reward, done}",
            problem or reset.describe(),
            evidence,
        )
        if plan.valid:
            step = await probe.post("/step", {"action": plan.valid[0]})
            problem = _result_problem(step)
            report.check(
                problem is None,
                "openenv.http.step",
                "200 {observation, reward, done}",
                problem or step.describe(),
                evidence,
            )
        else:
            report.error("openenv.http.step", "no valid action to send")
        objects = [(label, action) for label, action in plan.invalid if isinstance(action, dict)]
        if objects:
            label, action = objects[0]
            refused = await probe.post("/step", {"action": action})
            detail = refused.body.get("detail") if isinstance(refused.body, dict) else None
            report.check(
                refused.status == 422 and isinstance(detail, list),
                "openenv.http.invalid-action",
                f"422 with a detail list for {label}",
                refused.describe(),
                evidence,
            )
        else:
            report.unsupported("openenv.http.invalid-action", "no invalid action object to send")
        if options.crash_action is not None:
            crash = await probe.post("/step", {"action": options.crash_action})
            report.info("openenv.http.crash-response", crash.describe(), evidence=evidence)
        else:
            report.unsupported("openenv.http.crash-response", "the target declares no crash_action")


def _http_reset(data: dict[str, Any]) -> dict[str, Any]:
    # HTTP /reset refuses a negative seed that /ws lets through; send only what HTTP accepts.
    seed = data.get("seed")
    if isinstance(seed, int) and seed < 0:
        return {k: v for k, v in data.items() if k != "seed"}
    return dict(data)


async def mcp(ctx: PhaseContext) -> None:
    report = ctx.report
    paths = await load_openapi_paths(ctx)
    if paths is None or "/mcp" not in paths:
        report.unsupported("openenv.mcp.jsonrpc", "no /mcp in the OpenAPI paths")
        return
    async with HttpProbe(ctx.url, report.transcript("POST /mcp"), ctx.timeout) as probe:
        for what, raw, code in (("unparsable JSON", "not json at all", -32700), ("an empty object", "{}", -32600)):
            reply = await probe.post("/mcp", raw=raw)
            body = reply.body if isinstance(reply.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            report.check(
                reply.status == 200 and body.get("jsonrpc") == "2.0" and error.get("code") == code,
                "openenv.mcp.jsonrpc",
                f"200 JSON-RPC 2.0 error {code} for {what}",
                reply.describe(),
                probe.transcript,
            )
