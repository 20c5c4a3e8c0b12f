"""SS-11: parallel sessions with nonces, two concurrent chats from one parent, a DELETE during a chat."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from checks.session import judging_phases
from checks.session.facts import base_request, client, records_of, tree_mode
from checks.session.options import Ctx
from checks.session.routes import SessionClient
from checks.session.witness import Witness, record_witnessed


async def nonce_session(http: SessionClient, base: dict[str, Any], nonce: str) -> tuple[list[str], Witness | None]:
    """Two turns carrying `nonce`; the problems seen in this session's records, and the last call beside them."""
    sid = await http.new_session()
    history = [{"role": "user", "content": f"Repeat the nonce: {nonce}"}]
    for turn in range(2):
        reply = await http.chat(sid, {**base, "messages": history})
        failed = judging_phases.nonce_turn_problem(nonce, turn, reply)
        if failed is not None:
            return [failed], Witness(reply, None, "no record")
        history += [reply.body["choices"][0]["message"], {"role": "user", "content": f"Again: nonce {nonce}"}]
    records = records_of(await http.get(sid))
    await http.delete(sid)
    problem = judging_phases.nonce_records_problem(nonce, records)
    if problem is not None:
        return [problem], Witness(reply, records, f"records of the session of {nonce}")
    return [], None


async def concurrency_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "parallel sessions, sibling chats, delete in flight") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        nonces = [f"n{secrets.token_hex(4)}" for _ in range(ctx.options.parallel_sessions)]
        sessions = await asyncio.gather(*(nonce_session(http, base, n) for n in nonces))
        problems = [p for found, _ in sessions for p in found]
        witness = next((w for _, w in sessions if w is not None), None)
        first = [{"role": "user", "content": "Name a colour."}]
        opening = await http.chat(sid, {**base, "messages": first})
        message = (
            opening.body["choices"][0]["message"] if opening.status == 200 and isinstance(opening.body, dict) else {}
        )
        second = [*first, message, {"role": "user", "content": "Another one."}]
        twins = await asyncio.gather(*(http.chat(sid, {**base, "messages": second}) for _ in range(2)))
        snapshot = await http.get(sid)
        mode = tree_mode(ctx, snapshot)
        sibling_witness = Witness(
            twins[0], snapshot.body if snapshot.is_json else snapshot.describe(), "session after both"
        )
        siblings = judging_phases.sibling_problems([opening, *twins], snapshot, mode)
        problems += siblings
        if witness is None and siblings:
            witness = sibling_witness
        in_flight = asyncio.ensure_future(
            http.chat(sid, {**base, "messages": [{"role": "user", "content": "Slow one."}]})
        )
        await asyncio.sleep(0)
        deleted = await http.delete(sid)
        chat = await in_flight
        gone = await http.get(sid)
        in_flight_problem = judging_phases.delete_in_flight_problem(deleted, chat, gone)
        if in_flight_problem is not None:
            problems.append(in_flight_problem)
            witness = witness or Witness(chat, gone.body if gone.is_json else gone.describe(), "GET after the DELETE")
    record_witnessed(report, judging_phases.concurrency(problems, len(nonces), mode), http.transcript, witness)
