"""SS-11: parallel sessions with nonces, two concurrent chats from one parent, a DELETE during a chat."""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from checks.session.facts import base_request, client, records_of, tree_mode
from checks.session.options import Ctx
from checks.session.routes import SessionClient
from checks.session.witness import Witness, check_witnessed


async def nonce_session(http: SessionClient, base: dict[str, Any], nonce: str) -> tuple[list[str], Witness | None]:
    """Two turns carrying `nonce`; the problems seen in this session's records, and the last call beside them."""
    sid = await http.new_session()
    history = [{"role": "user", "content": f"Repeat the nonce: {nonce}"}]
    for turn in range(2):
        reply = await http.chat(sid, {**base, "messages": history})
        if reply.status != 200 or not isinstance(reply.body, dict):
            return [f"{nonce} turn {turn}: {reply.describe(120)}"], Witness(reply, None, "no record")
        history += [reply.body["choices"][0]["message"], {"role": "user", "content": f"Again: nonce {nonce}"}]
    records = records_of(await http.get(sid))
    await http.delete(sid)
    texts = [str((r.get("request") or {}).get("messages")) + str(r.get("response")) for r in records]
    foreign = [t for t in texts if nonce not in t]
    if len(records) != 2 or foreign:
        problem = f"session of {nonce}: {len(records)} records, {len(foreign)} without its nonce"
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
        records = records_of(snapshot)
        before = len(problems)
        if any(r.status != 200 for r in (opening, *twins)):
            problems.append(f"sibling chats: {[r.status for r in (opening, *twins)]}")
        elif mode == "v2":
            nodes = (snapshot.body.get("metadata") or {}).get("tree", {}).get("nodes") or []
            if [(n.get("id"), n.get("parent")) for n in nodes] != [(0, None), (1, 0), (2, 0)]:
                problems.append(f"two chats from node 0 gave nodes {[(n.get('id'), n.get('parent')) for n in nodes]}")
        elif len(records) != 2:
            problems.append(f"two concurrent chats from one parent left {len(records)} records, expected 2")
        if witness is None and len(problems) > before:
            witness = sibling_witness
        in_flight = asyncio.ensure_future(
            http.chat(sid, {**base, "messages": [{"role": "user", "content": "Slow one."}]})
        )
        await asyncio.sleep(0)
        deleted = await http.delete(sid)
        chat = await in_flight
        gone = await http.get(sid)
        if deleted.status != 204 or chat.status >= 500 or gone.status != 404:
            problems.append(f"delete in flight: DELETE {deleted.status}, chat {chat.status}, GET after {gone.status}")
            witness = witness or Witness(chat, gone.body if gone.is_json else gone.describe(), "GET after the DELETE")
    check_witnessed(
        report,
        not problems,
        "session.ss11.concurrency",
        expected=f"{len(nonces)} parallel sessions each holding only its nonce; concurrent chats: "
        + ("two sibling nodes" if mode == "v2" else "one new record")
        + "; DELETE in flight 204, chat not 5xx, then 404",
        actual="; ".join(problems) or "as expected",
        evidence=http.transcript,
        witness=witness,
    )
