"""Discovery: GET /health, /metadata, /schema and /openapi.json; the mode and the profile they show."""

from __future__ import annotations

from checks.decision import record, unsupported
from checks.http_client import HttpClient
from checks.openenv import http_judging as judge
from checks.openenv.options import Ctx


async def discover_phase(ctx: Ctx) -> None:
    report, known = ctx.report, ctx.state
    async with HttpClient(ctx.url, report.transcript("discovery endpoints"), ctx.timeout, ctx.options) as http:
        health = await http.get("/health")
        record(report, judge.health(health), http.transcript)
        metadata = await http.get("/metadata")
        record(report, judge.metadata(metadata), http.transcript)
        schema = await http.get("/schema")
        record(report, judge.schema(schema), http.transcript)
        known.schema, known.schema_fetched = (judge.usable_schema(schema.body) if schema.status == 200 else None), True
        openapi = await http.get("/openapi.json")
        record(report, judge.openapi(openapi), http.transcript)
    version = judge.openapi_version(openapi)
    known.openapi_paths, known.openapi_fetched = judge.openapi_paths(openapi), True
    if known.openapi_paths is None:
        why = "no OpenAPI paths to read the mode from"
        record(report, unsupported("openenv.mode.consistent", why), http.transcript)
    else:
        record(report, judge.mode(known.openapi_paths), http.transcript)
    markers = [
        marker
        for marker, seen in (
            ("/list_environments path", "/list_environments" in (known.openapi_paths or ())),
            ("reset_observation in /schema", isinstance(schema.body, dict) and "reset_observation" in schema.body),
        )
        if seen
    ]
    record(report, judge.profile(version, known.openapi_paths, markers), http.transcript)
