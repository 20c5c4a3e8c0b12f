"""Recording what the judge decides about a SET_STATE: its weights and its sequence number."""

from __future__ import annotations

from checks.core import PhaseStopped
from checks.decision import record
from checks.rllink import judging
from checks.rllink.link import Link
from checks.rllink.options import Ctx


def judge_state(ctx: Ctx, message: dict[str, object], link: Link, after: str = "GET_STATE") -> int:
    """The SET_STATE's weights_seq_no, after recording rllink.state.shape and rllink.seq.monotonic.

    Unusable weights stop the phase: what follows assumes them.
    """
    state = ctx.state
    assert state.dialect is not None
    judged = judging.state(message, state.dialect, ctx.options, state.seqs, after)
    record(ctx.report, judged.decisions, link.transcript)
    if judged.seq is None:
        raise PhaseStopped("SET_STATE is malformed", link.transcript)
    state.seqs.append(judged.seq)
    return judged.seq
