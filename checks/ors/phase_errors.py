"""Implementing a Server > Error Handling: refusals are JSON with "detail"; a broken body is a 4xx."""

from __future__ import annotations

import uuid

from checks.decision import missed, passed, record
from checks.ors.judging import error_body_problem, refused
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
    errors = [reply for reply in refusals + broken if reply.status >= 400]
    wrong = [problem for reply in errors if (problem := error_body_problem(reply))]
    json_detail = (
        missed("ors.errors.json-detail", expected='a JSON object with "detail"', actual="; ".join(wrong))
        if wrong
        else passed("ors.errors.json-detail", actual=f"{len(errors)} error answers carry detail")
    )
    bad = [f"{reply.path}: {reply.describe(80)}" for reply in broken if not refused(reply)]
    malformed = (
        missed("ors.errors.malformed-body", expected="a 4xx", actual="; ".join(bad))
        if bad
        else passed("ors.errors.malformed-body", actual=", ".join(str(reply.status) for reply in broken))
    )
    record(ctx.report, [json_detail, malformed], http.transcript)
