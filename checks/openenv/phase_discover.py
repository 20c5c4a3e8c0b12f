"""Discovery: GET /health, /metadata, /schema and /openapi.json; the mode and the profile they show."""

from __future__ import annotations

from checks.decision import record
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
    mode = "unknown"
    if known.openapi_paths is None:
        report.unsupported("openenv.mode.consistent", "no OpenAPI paths to read the mode from", http.transcript)
    else:
        mode = judge.mode_name(known.openapi_paths)
        record(report, judge.mode(known.openapi_paths), http.transcript)
    markers = [
        marker
        for marker, seen in (
            ("/list_environments path", "/list_environments" in (known.openapi_paths or ())),
            ("reset_observation in /schema", isinstance(schema.body, dict) and "reset_observation" in schema.body),
        )
        if seen
    ]
    profile = f"openenv-http/{version.split('.')[0]}.x" if isinstance(version, str) and version else "unknown"
    line = "openenv 0.10 or later" if markers else "openenv-core 0.3 or earlier (no 0.10 marker)"
    report.info(
        "openenv.discover.profile",
        actual=f"the wire shows {line}, {mode} mode; info.version {version!r} (profile {profile}); "
        f"0.10+ markers: {', '.join(markers) or 'none'}",
        evidence=http.transcript,
    )
