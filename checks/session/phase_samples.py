"""SS-12: /samples of a two-turn session, of an empty one and with a max_seq_len shorter than the first prompt."""

from __future__ import annotations

import numpy as np

from checks.core import PhaseStopped
from checks.http_client import Reply
from checks.session.agent import SCHEDULE, run_schedule
from checks.session.facts import base_request, client, metadata_of, output_logprobs, records_of
from checks.session.options import Ctx
from checks.session.samples import EMPTY_REASONS, SamplesFormatError, WireSample, decode_samples
from checks.session.witness import Witness, check_witnessed


def sample_problems(sample: WireSample, records: list[dict[str, object]], accumulated: object) -> list[str]:
    length = sample.fields.get("response_length")
    tokens, mask, log_probs = (sample.tensors[k] for k in ("tokens", "loss_mask", "rollout_log_probs"))
    problems = []
    if not isinstance(length, int) or len(mask) != length or len(log_probs) != length:
        return [f"response_length {length!r}, loss_mask {len(mask)}, rollout_log_probs {len(log_probs)}"]
    if tokens.ndim != 1 or tokens.tolist() != accumulated:
        problems.append("tokens are not the session's accumulated_token_ids (prompt then response)")
    recorded = np.asarray([lp for r in records for lp in output_logprobs(r)], dtype=np.float64)
    trained = log_probs[mask == 1]
    if trained.tobytes() != recorded.tobytes():
        as32 = trained.astype(np.float32).astype(np.float64).tobytes() == trained.tobytes()
        problems.append(
            "logprobs under the loss mask differ from the records' bit for bit "
            f"({len(trained)} vs {len(recorded)} values"
            + (
                ", and every sample value is float32-representable: rounded through float32"
                if as32 and len(trained)
                else ""
            )
            + f"); first sample values {trained[:3].tolist()}, records {recorded[:3].tolist()}"
        )
    return problems


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
        if isinstance(full, str):
            problems.append(f"a two-turn session: {full}")
        else:
            samples, meta = full
            if len(samples) != 1 or meta.get("empty_reason") is not None:
                problems.append(
                    f"{len(samples)} samples, empty_reason {meta.get('empty_reason')!r}; expected 1 and null"
                )
            for sample in samples[:1]:
                problems += sample_problems(
                    sample, records_of(snapshot), metadata_of(snapshot).get("accumulated_token_ids")
                )
        if problems:
            witness = shown(full_reply, full, records_of(snapshot))
        short_reply = await http.samples(sid, {"max_seq_len": 1, "metadata": {}})
        short = decoded(short_reply)
        if isinstance(short, str) or short[1].get("empty_reason") != "all_truncated" or short[0]:
            found = short if isinstance(short, str) else short[1].get("empty_reason")
            problems.append(f"max_seq_len 1: {found!r}, expected all_truncated")
            witness = witness or shown(short_reply, short, records_of(snapshot))
        await http.delete(sid)
        empty_sid = await http.new_session()
        empty_reply = await http.samples(empty_sid, {"max_seq_len": None, "metadata": {}})
        empty = decoded(empty_reply)
        await http.delete(empty_sid)
    if isinstance(empty, str) or empty[1].get("empty_reason") != "no_records" or empty[0]:
        problems.append(
            f"no records: {empty if isinstance(empty, str) else empty[1].get('empty_reason')!r}, expected no_records"
        )
    elif empty[1].get("empty_reason") not in EMPTY_REASONS:
        problems.append(f"empty_reason {empty[1].get('empty_reason')!r}")
    check_witnessed(
        ctx.report,
        not problems,
        "session.ss12.samples",
        expected="safetensors with _samples_meta, pinned dtypes and lengths, "
        "logprobs equal to the records' bit for bit, no_records and all_truncated where due",
        actual="; ".join(problems) or "as expected",
        evidence=http.transcript,
        witness=witness or shown(empty_reply, empty, []),
    )
