"""POST /reset and /step in simulation mode; each request stands alone (the reference server keeps no state)."""

from __future__ import annotations

from typing import Any

from checks.core import Report, Transcript
from checks.decision import record
from checks.http_client import HttpClient, Reply
from checks.openenv import http_judging
from checks.openenv.facts import action_plan, load_openapi_paths, load_schema, markers_010
from checks.openenv.judging import http_metadata_problem
from checks.openenv.options import Ctx


async def http_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    paths = await load_openapi_paths(ctx)
    if paths is None or not {"/reset", "/step"} <= paths:
        for clause_id in (
            "openenv.http.reset",
            "openenv.http.step",
            "openenv.http.invalid-action",
            "openenv.http.crash-response",
            "openenv.http.metadata",
        ):
            report.unsupported(clause_id, "the server is not in simulation mode (no /reset and /step in OpenAPI)")
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
            report.error("openenv.http.step", "no valid action to send")
        _judge_metadata(report, markers, answers, evidence)
        objects = [(label, action) for label, action in plan.invalid if isinstance(action, dict)]
        if objects:
            label, action = objects[0]
            refused = await probe.post("/step", {"action": action})
            detail = refused.body.get("detail") if isinstance(refused.body, dict) else None
            report.check(
                refused.status == 422 and isinstance(detail, list),
                "openenv.http.invalid-action",
                expected=f"422 with a detail list for {label}",
                actual=refused.describe(),
                evidence=evidence,
            )
        else:
            report.unsupported("openenv.http.invalid-action", "no invalid action object to send")
        if options.crash_action is not None:
            crash = await probe.post("/step", {"action": options.crash_action})
            report.info("openenv.http.crash-response", actual=crash.describe(), evidence=evidence)
        else:
            report.unsupported("openenv.http.crash-response", "the target declares no crash_action")


def _judge_metadata(report: Report, markers: list[str], answers: list[tuple[str, Reply]], evidence: Transcript) -> None:
    """0.10 always puts `metadata` at the top of an HTTP body; 0.3 never did, so only a 0.10 wire is judged."""
    if not markers:
        report.info(
            "openenv.http.metadata",
            actual="not judged: the wire shows no openenv 0.10 marker (0.3 sends no top-level metadata)",
            evidence=evidence,
        )
        return
    for route, reply in answers:
        problem = http_metadata_problem(reply.body) if reply.status == 200 else None
        report.check(
            problem is None,
            "openenv.http.metadata",
            expected=f"POST {route}: a top-level metadata key, null or the observation's metadata "
            f"(the wire shows {', '.join(markers)})",
            actual=problem or "metadata as 0.10 sends it",
            evidence=evidence,
        )


def _http_reset(data: dict[str, Any]) -> dict[str, Any]:
    # HTTP /reset refuses a negative seed that /ws lets through; send only what HTTP accepts.
    seed = data.get("seed")
    if isinstance(seed, int) and seed < 0:
        return {k: v for k, v in data.items() if k != "seed"}
    return dict(data)
