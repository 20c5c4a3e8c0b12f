"""Judging a SET_STATE: its weights (rllink.state.shape) and its sequence number (rllink.seq.monotonic)."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.rllink.link import Link
from checks.rllink.options import Ctx
from checks.rllink.weights import NotJudged, WeightsProblem, check_weights, seq_of


def judge_state(ctx: Ctx, message: dict[str, object], link: Link, after: str = "GET_STATE") -> int:
    report, state = ctx.report, ctx.state
    assert state.dialect is not None
    try:
        seq = seq_of(dict(message), state.dialect)
        found = check_weights(dict(message), state.dialect, ctx.options)
    except WeightsProblem as exc:
        report.failed(
            "rllink.state.shape", expected="usable weights and a seq", actual=str(exc), evidence=link.transcript
        )
        raise PhaseStopped("SET_STATE is malformed", link.transcript) from None
    except NotJudged as exc:
        report.info("rllink.state.shape", actual=f"not judged, because {exc}", evidence=link.transcript)
        seq = seq_of(dict(message), state.dialect)
        found = ""
    else:
        report.passed("rllink.state.shape", actual=f"weights_seq_no {seq}; {found}", evidence=link.transcript)
    note_seq(ctx, seq, link, after)
    return seq


def note_seq(ctx: Ctx, seq: int, link: Link, after: str) -> None:
    seqs = ctx.state.seqs
    highest = max(seqs, default=0)
    ctx.report.check(
        seq >= highest,
        "rllink.seq.monotonic",
        expected=f"weights_seq_no >= {highest}",
        actual=f"{seq} after {after} (earlier: {seqs[-5:]})",
        evidence=link.transcript,
    )
    seqs.append(seq)
