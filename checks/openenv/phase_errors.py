"""Malformed JSON, unknown and missing types, an env crash: each answered with its code, the session kept."""

from __future__ import annotations

import json

from checks.decision import record, unsupported
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish
from checks.openenv.judging import error_code_decision
from checks.openenv.options import Ctx
from checks.openenv.session import open_session


async def errors_phase(ctx: Ctx) -> None:
    report, options = ctx.report, ctx.options
    cases = [
        ("openenv.errors.invalid-json", "INVALID_JSON", "malformed JSON", '{"type": "step", "data": {'),
        ("openenv.errors.unknown-type", "UNKNOWN_TYPE", "an unknown type", '{"type": "rlconform-unknown"}'),
        ("openenv.errors.unknown-type", "UNKNOWN_TYPE", "no type", '{"data": {}}'),
    ]
    if options.crash_action is not None:
        crash_step = json.dumps({"type": "step", "data": options.crash_action})
        cases.append(("openenv.errors.execution", "EXECUTION_ERROR", "the declared crash action", crash_step))
    else:
        record(report, unsupported("openenv.errors.execution", "the target declares no crash_action"))
    for clause_id, code, what, text in cases:
        ws = await open_session(ctx, f"recoverable error: {what}")
        try:
            await ws.reset(options.reset)
            await ws.send_raw(text, what)
            reply = await ws.reply(what)
            record(report, [judge.recoverable(clause_id, code, what, reply), error_code_decision(reply)], ws.transcript)
            again = await ws.reset(options.reset)
            record(report, judge.still_usable(clause_id, what, again), ws.transcript)
        finally:
            await finish(ws, ctx.timeout)
