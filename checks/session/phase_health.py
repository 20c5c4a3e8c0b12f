"""SS-01: GET /health twice."""

from __future__ import annotations

from checks.session import judging_phases
from checks.session.facts import client
from checks.session.options import Ctx
from checks.session.witness import Witness, record_witnessed


async def health_phase(ctx: Ctx) -> None:
    async with client(ctx, "GET /health") as http:
        first = await http.health()
        second = await http.health()
    witness = Witness(first, second.body if second.is_json else second.describe(), "second /health")
    record_witnessed(ctx.report, judging_phases.health(first, second), http.transcript, witness)
