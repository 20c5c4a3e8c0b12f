"""SS-12: /samples of a two-turn session, of an empty one and with a max_seq_len shorter than the first prompt."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.http_client import Reply
from checks.session import judging_phases
from checks.session.agent import SCHEDULE, run_schedule
from checks.session.facts import base_request, client, metadata_of, records_of
from checks.session.options import Ctx
from checks.session.samples import SamplesFormatError, WireSample, decode_samples
from checks.session.witness import Witness, record_witnessed


def shown(reply: Reply, found: tuple[list[WireSample], dict[str, object]] | str, records: object) -> Witness:
    """A /samples call as decoded, beside the records its samples come from."""
    if isinstance(found, str):
        return Witness(reply, records, "records", shown_reply=found)
    samples, meta = found
    decoded_samples = [{**s.fields, **s.tensors} for s in samples]
    return Witness(reply, records, "records", shown_reply={"samples": decoded_samples, "meta": meta})


def decoded(reply: Reply) -> tuple[list[WireSample], dict[str, object]] | str:
    if reply.status != 200:
        return f"status {reply.describe(160)}"
    try:
        return decode_samples(reply.raw)
    except SamplesFormatError as exc:
        return str(exc)


async def samples_phase(ctx: Ctx) -> None:
    problems: list[str] = []
    witness: Witness | None = None
    async with client(ctx, "POST /samples") as http:
        sid = await http.new_session()
        run = await run_schedule(http, sid, await base_request(ctx, http, sid), SCHEDULE[:2])
        if run.failed_step() is not None:
            raise PhaseStopped("the two turns before /samples failed", http.transcript)
        snapshot = run.steps[-1].snapshot
        full_reply = await http.samples(sid, {"max_seq_len": None, "metadata": {}})
        full = decoded(full_reply)
        accumulated = metadata_of(snapshot).get("accumulated_token_ids")
        problems += judging_phases.full_samples_problems(full, records_of(snapshot), accumulated)
        if problems:
            witness = shown(full_reply, full, records_of(snapshot))
        short_reply = await http.samples(sid, {"max_seq_len": 1, "metadata": {}})
        short = decoded(short_reply)
        all_truncated = judging_phases.all_truncated_problem(short)
        if all_truncated is not None:
            problems.append(all_truncated)
            witness = witness or shown(short_reply, short, records_of(snapshot))
        await http.delete(sid)
        empty_sid = await http.new_session()
        empty_reply = await http.samples(empty_sid, {"max_seq_len": None, "metadata": {}})
        empty = decoded(empty_reply)
        await http.delete(empty_sid)
    problems += [p for p in [judging_phases.no_records_problem(empty)] if p is not None]
    decision = judging_phases.samples(problems)
    record_witnessed(ctx.report, decision, http.transcript, witness or shown(empty_reply, empty, []))
