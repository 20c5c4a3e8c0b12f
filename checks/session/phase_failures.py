"""SS-08: a prompt beyond the backend's context window fails and is not recorded; a new first turn works."""

from __future__ import annotations

from checks.session.facts import base_request, client, records_of
from checks.session.options import Ctx
from checks.session.witness import Witness, check_witnessed


async def failures_phase(ctx: Ctx) -> None:
    async with client(ctx, "an oversized first turn, then another first turn") as http:
        sid = await http.new_session()
        base = await base_request(ctx, http, sid)
        huge = "x" * ctx.options.overflow_chars
        failed = await http.chat(sid, {**base, "messages": [{"role": "user", "content": huge}]})
        after_failure = records_of(await http.get(sid))
        retry = await http.chat(sid, {**base, "messages": [{"role": "user", "content": "A short question."}]})
        after_retry = records_of(await http.get(sid))
        await http.delete(sid)
    ok = 400 <= failed.status < 500 and not after_failure and retry.status == 200 and len(after_retry) == 1
    check_witnessed(
        ctx.report,
        ok,
        "session.ss08.failed-not-recorded",
        expected="the oversized turn: a 4xx and no record; the next first turn: 200 and one record",
        actual=f"oversized: {failed.describe(160)}, then {len(after_failure)} records; "
        f"next turn: {retry.describe(120)}, then {len(after_retry)} records",
        evidence=http.transcript,
        witness=Witness(failed, after_failure, "records after it")
        if after_failure or not 400 <= failed.status < 500
        else Witness(retry, after_retry, "records after the next turn"),
    )
