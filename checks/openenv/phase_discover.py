"""Discovery: GET /health, /metadata, /schema and /openapi.json; the mode and the profile they show."""

from __future__ import annotations

from checks.http_client import HttpClient
from checks.openenv.facts import usable_schema
from checks.openenv.options import Ctx

SIMULATION_PATHS = ("/reset", "/step", "/state")


async def discover_phase(ctx: Ctx) -> None:
    report, known = ctx.report, ctx.state
    async with HttpClient(ctx.url, report.transcript("discovery endpoints"), ctx.timeout, ctx.options) as http:
        health = await http.get("/health")
        report.check(
            health.status == 200 and isinstance(health.body, dict) and health.body.get("status") == "healthy",
            "openenv.discover.health",
            expected='200 {"status": "healthy"}',
            actual=health.describe(),
            evidence=http.transcript,
        )

        metadata = await http.get("/metadata")
        body = metadata.body if isinstance(metadata.body, dict) else {}
        report.check(
            metadata.status == 200 and isinstance(body.get("name"), str) and isinstance(body.get("description"), str),
            "openenv.discover.metadata",
            expected="200 with string name and description",
            actual=metadata.describe(),
            evidence=http.transcript,
        )

        schema = await http.get("/schema")
        usable = usable_schema(schema.body) if schema.status == 200 else None
        report.check(
            usable is not None,
            "openenv.discover.schema",
            expected="200 with object action, observation and state schemas",
            actual=schema.describe(),
            evidence=http.transcript,
        )
        known.schema, known.schema_fetched = usable, True

        openapi = await http.get("/openapi.json")
        document = openapi.body if isinstance(openapi.body, dict) else {}
        info = document.get("info")
        version = info.get("version") if isinstance(info, dict) else None
        report.check(
            openapi.status == 200 and isinstance(version, str),
            "openenv.discover.openapi",
            expected="200 with a string info.version",
            actual=openapi.describe(),
            evidence=http.transcript,
        )

    paths = document.get("paths") if openapi.status == 200 else None
    known.openapi_paths, known.openapi_fetched = (set(paths) if isinstance(paths, dict) else None), True
    mode = "unknown"
    if known.openapi_paths is None:
        report.unsupported("openenv.mode.consistent", "no OpenAPI paths to read the mode from", http.transcript)
    else:
        present = [p for p in SIMULATION_PATHS if p in known.openapi_paths]
        mode = "simulation" if len(present) == 3 else "production" if not present else "mixed"
        report.check(
            mode != "mixed",
            "openenv.mode.consistent",
            expected="all or none of /reset, /step, /state",
            actual=f"{mode} mode: {', '.join(present) or 'none'} listed",
            evidence=http.transcript,
        )
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
