"""SS-02 and SS-03: create sessions, read a new one, delete one and touch it again."""

from __future__ import annotations

import asyncio

from checks.core import PhaseStopped
from checks.session import judging, judging_phases
from checks.session.facts import client
from checks.session.options import Ctx
from checks.session.witness import Witness, record_witnessed


async def lifecycle_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "create, read, delete") as http:
        creates = [await http.create() for _ in range(ctx.options.creates)]
        ids = judging_phases.session_ids(creates)
        fresh = await http.get(ids[0]) if isinstance(ids[0], str) else None
        odd = next((r for r, i in zip(creates, ids, strict=True) if r.status != 200 or ids.count(i) > 1), creates[0])
        witness = Witness(odd, fresh.body if fresh else None, "GET of the first new session")
        record_witnessed(report, judging_phases.created(creates, fresh), http.transcript, witness)
        if not isinstance(ids[0], str):
            raise PhaseStopped("no session id to delete", http.transcript)
        sid = ids[0]
        deleted = await http.delete(sid)
        after = {
            "GET": await http.get(sid),
            "DELETE": await http.delete(sid),
            "chat": await http.chat(sid, {"messages": [{"role": "user", "content": "hello"}]}),
            "samples": await http.samples(sid, {}),
            "GET unknown": await http.get("0" * 32),
        }
        await asyncio.gather(*(http.delete(other) for other in ids[1:] if isinstance(other, str)))
    odd = next((r for r in after.values() if not judging.not_found(r)), after["GET"])
    witness = Witness(
        deleted if deleted.status != 204 or deleted.raw else odd,
        after["GET"].body if after["GET"].is_json else after["GET"].describe(),
        "GET after the DELETE",
    )
    record_witnessed(report, judging_phases.deleted_then_gone(deleted, after), http.transcript, witness)
