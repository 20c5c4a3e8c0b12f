"""SS-01: GET /health twice."""

from __future__ import annotations

from checks.session.facts import client
from checks.session.judging import HEX32
from checks.session.options import Ctx
from checks.session.witness import Witness, check_witnessed


async def health_phase(ctx: Ctx) -> None:
    async with client(ctx, "GET /health") as http:
        first = await http.health()
        second = await http.health()
    bodies = [r.body if isinstance(r.body, dict) else {} for r in (first, second)]
    ids = [b.get("session_server_instance_id") for b in bodies]
    ok = all(r.status == 200 and b.get("status") == "ok" for r, b in zip((first, second), bodies, strict=True))
    id_ok = ids[0] is None or (isinstance(ids[0], str) and HEX32.fullmatch(ids[0]) is not None and ids[0] == ids[1])
    check_witnessed(
        ctx.report,
        ok and id_ok,
        "session.ss01.health",
        expected='200 {"status": "ok"} twice, with the same 32-hex session_server_instance_id if any',
        actual=f"{first.describe()}; then {second.describe()}",
        evidence=http.transcript,
        witness=Witness(first, second.body if second.is_json else second.describe(), "second /health"),
    )
