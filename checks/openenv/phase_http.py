"""POST /reset and /step in simulation mode; each request stands alone (the reference server keeps no state)."""

from __future__ import annotations

from typing import Any

from checks.decision import error, info, record, unsupported
from checks.http_client import HttpClient
from checks.openenv import http_judging
from checks.openenv.facts import action_plan, load_openapi_paths, load_schema, markers_010
from checks.openenv.options import Ctx

HTTP_CLAUSES = (
    "openenv.http.reset",
    "openenv.http.step",
    "openenv.http.invalid-action",
    "openenv.http.crash-response",
    "openenv.http.metadata",
)


async def http_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    paths = await load_openapi_paths(ctx)
    if paths is None or not {"/reset", "/step"} <= paths:
        why = "the server is not in simulation mode (no /reset and /step in OpenAPI)"
        record(report, [unsupported(clause_id, why) for clause_id in HTTP_CLAUSES])
        return
    plan = action_plan(options, await load_schema(ctx))
    markers = await markers_010(ctx)
    async with HttpClient(ctx.url, report.transcript("HTTP /reset and /step"), ctx.timeout, ctx.options) as probe:
        evidence = probe.transcript
        reset = await probe.post("/reset", _http_reset(options.reset))
        record(report, http_judging.result("openenv.http.reset", reset), evidence)
        answers = [("/reset", reset)]
        if plan.valid:
            step = await probe.post("/step", {"action": plan.valid[0]})
            record(report, http_judging.result("openenv.http.step", step), evidence)
            answers.append(("/step", step))
        else:
            record(report, error("openenv.http.step", "no valid action to send"))
        record(report, http_judging.http_metadata(markers, answers), evidence)
        objects = [(label, action) for label, action in plan.invalid if isinstance(action, dict)]
        if objects:
            label, action = objects[0]
            refused = await probe.post("/step", {"action": action})
            record(report, http_judging.invalid_action(refused, label), evidence)
        else:
            record(report, unsupported("openenv.http.invalid-action", "no invalid action object to send"))
        if options.crash_action is not None:
            crash = await probe.post("/step", {"action": options.crash_action})
            record(report, info("openenv.http.crash-response", actual=crash.describe()), evidence)
        else:
            record(report, unsupported("openenv.http.crash-response", "the target declares no crash_action"))


def _http_reset(data: dict[str, Any]) -> dict[str, Any]:
    # HTTP /reset refuses a negative seed that /ws lets through; send only what HTTP accepts.
    seed = data.get("seed")
    if isinstance(seed, int) and seed < 0:
        return {k: v for k, v in data.items() if k != "seed"}
    return dict(data)
