"""SS-08: a prompt beyond the backend's context window fails and is not recorded; a new first turn works."""

from __future__ import annotations

from checks.session import judging_phases
from checks.session.facts import base_request, client, records_of
from checks.session.options import Ctx
from checks.session.witness import Witness, record_witnessed


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
    witness = (
        Witness(failed, after_failure, "records after it")
        if after_failure or not 400 <= failed.status < 500
        else Witness(retry, after_retry, "records after the next turn")
    )
    decision = judging_phases.failed_not_recorded(failed, after_failure, retry, after_retry)
    record_witnessed(ctx.report, decision, http.transcript, witness)
