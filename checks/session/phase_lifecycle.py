"""SS-02 and SS-03: create sessions, read a new one, delete one and touch it again."""

from __future__ import annotations

import asyncio

from checks.core import PhaseStopped
from checks.http_client import Reply
from checks.session.facts import client
from checks.session.judging import HEX32
from checks.session.options import Ctx
from checks.session.witness import Witness, check_witnessed


def not_found(reply: Reply) -> bool:
    message = reply.error_message()
    return reply.status == 404 and message is not None and message.startswith("session not found")


async def lifecycle_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "create, read, delete") as http:
        creates = [await http.create() for _ in range(ctx.options.creates)]
        ids = [r.body.get("session_id") if isinstance(r.body, dict) else None for r in creates]
        shaped = all(r.status == 200 for r in creates) and all(isinstance(i, str) and HEX32.fullmatch(i) for i in ids)
        fresh = await http.get(ids[0]) if isinstance(ids[0], str) else None
        empty = fresh is not None and fresh.status == 200 and (fresh.body or {}).get("records") == []
        odd = next((r for r, i in zip(creates, ids, strict=True) if r.status != 200 or ids.count(i) > 1), creates[0])
        check_witnessed(
            report,
            shaped and len(set(ids)) == len(ids) and empty,
            "session.ss02.create",
            expected=f'{len(ids)} x 200 {{"session_id": <32 hex>}}, all different; GET of a new one lists records []',
            actual=f"ids {ids[:4]}{'…' if len(ids) > 4 else ''}; {len(set(map(str, ids)))} distinct; GET: "
            + (fresh.describe() if fresh else "not sent"),
            evidence=http.transcript,
            witness=Witness(odd, fresh.body if fresh else None, "GET of the first new session"),
        )
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
    wrong = {name: r.describe(120) for name, r in after.items() if not not_found(r)}
    odd = next((r for r in after.values() if not not_found(r)), after["GET"])
    check_witnessed(
        report,
        deleted.status == 204 and not deleted.raw and not wrong,
        "session.ss03.lifecycle",
        expected="DELETE 204 with no body; then GET, DELETE, chat, samples and an unknown id: "
        '404 {"error": "session not found: ..."}',
        actual=f"DELETE {deleted.describe(80)}; "
        + ("; ".join(f"{k}: {v}" for k, v in wrong.items()) or "all 404 as expected"),
        evidence=http.transcript,
        witness=Witness(
            deleted if deleted.status != 204 or deleted.raw else odd,
            after["GET"].body if after["GET"].is_json else after["GET"].describe(),
            "GET after the DELETE",
        ),
    )
