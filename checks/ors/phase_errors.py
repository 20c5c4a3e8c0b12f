"""Implementing a Server > Error Handling: refusals are JSON with "detail"; a broken body is a 4xx."""

from __future__ import annotations

import uuid

from checks.decision import record
from checks.ors.judging import judge_error_bodies, judge_malformed_bodies
from checks.ors.options import Ctx
from checks.ors.routes import client, learn

ERRORS_CLAUSES = ("ors.errors.json-detail", "ors.errors.malformed-body")


async def errors_phase(ctx: Ctx) -> None:
    async with client(ctx, "errors") as http:
        await learn(ctx, http)
        never = f"zz-{uuid.uuid4().hex}"
        refusals = [
            await http.post(f"/{http.env}/tasks", {"split": "__no_such_split__"}),
            await http.ping(None),
            await http.ping(never),
            await http.prompt(never),
            await http.create(str(uuid.uuid4()), {"env_name": http.env}),
        ]
        broken = [
            await http.post("/create", raw="{not json", headers=http.session(str(uuid.uuid4()))),
            await http.post(f"/{http.env}/tasks", raw="{not json"),
        ]
    record(ctx.report, [judge_error_bodies(refusals + broken), judge_malformed_bodies(broken)], http.transcript)
