"""The reuse phase of the plugrl-server suite: section 10.1, reuse-feedback-obs.

A server that lists the feature must answer reuses it can honour and close
with a resync on every other one: an env it holds no observation of (never
fed back on this connection, fed back only on another, or last fed back
terminally) and a malformed `reuse`; a reused row must be answered as the
env's own observation would be. A server that does not list it should
refuse an infer carrying `reuse` at all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from checks.core import PhaseContext, Report, summarize
from checks.plugrl import clauses as C
from checks.plugrl.codec import pack
from checks.plugrl.messages import MALFORMED_REUSES, infer_message
from checks.plugrl.probe import Probe, together
from checks.plugrl.rows import ROW_TOLERANCE

REUSE_CLAUSES = (
    C.REUSE_ANSWERED,
    C.REUSE_ALL_ROWS,
    C.REUSE_ROWS,
    C.REUSE_CONNECTION_SCOPED,
    C.REUSE_UNKNOWN_ENV,
    C.REUSE_AFTER_TERMINAL,
    C.REUSE_MALFORMED,
)
PHASE_CLAUSES = (C.REUSE_OFFERED, C.REUSE_UNOFFERED, *REUSE_CLAUSES)


async def phase_reuse(ctx: PhaseContext) -> None:
    report = ctx.report
    holder = Probe(ctx, "reuse")
    try:
        await holder.open()
        if not holder.offers(C.REUSE_FEATURE):
            why = f"the metadata does not list {C.REUSE_FEATURE}"
            report.unsupported(C.REUSE_OFFERED, why, holder.transcript)
            for clause_id in REUSE_CLAUSES:
                report.unsupported(clause_id, why, holder.transcript)
            await holder.cycle([0, 1])
            # Env 0 was fed back, so only the missing feature makes this reuse wrong.
            await holder.fault(
                pack(infer_message(ctx.options, [0, 1], reuse=[True, False])),
                C.REUSE_UNOFFERED,
                f"reusing env 0 though the server does not list {C.REUSE_FEATURE}",
            )
            return
        report.passed(C.REUSE_OFFERED, actual=f"features lists {C.REUSE_FEATURE}", evidence=holder.transcript)
        report.unsupported(C.REUSE_UNOFFERED, f"the metadata lists {C.REUSE_FEATURE}", holder.transcript)
        await _valid_and_impossible_reuses(ctx, holder)
    finally:
        await holder.close()
    for what, malformed in MALFORMED_REUSES:
        await _malformed_reuse(ctx, what, malformed)


async def _valid_and_impossible_reuses(ctx: PhaseContext, holder: Probe) -> None:
    # Each batch sent in full first, to compare its reused answer with.
    in_order = await holder.cycle([0, 1])
    reversed_order = await holder.cycle([1, 0])
    repeat = await holder.infer([0, 1])
    await holder.feedback([0, 1], done=[False, True])
    # Env 1's episode ended, so it sends its observation; env 0 reuses.
    partial = await holder.infer([0, 1], at_stake=C.REUSE_ANSWERED, reuse=[True, False])
    await holder.feedback([0, 1])
    # Reversed, so a cache kept by position rather than by env fills each row with the other env.
    swapped = await holder.infer([1, 0], at_stake=C.REUSE_ALL_ROWS, reuse=[True, True])
    await holder.feedback([1, 0], done=[False, True])
    _check_reused_answers(
        ctx.report,
        holder,
        in_order,
        repeat,
        [("[0, 1] reusing env 0", partial, in_order), ("[1, 0] reusing both", swapped, reversed_order)],
    )
    # Env 1's last feedback, on this connection, was not terminal: another
    # connection must still not reuse it, nor an env nobody fed back.
    for clause, env, what in (
        (C.REUSE_CONNECTION_SCOPED, 1, "reusing env 1, fed back (not terminal) only on another connection"),
        (C.REUSE_UNKNOWN_ENV, 7, "reusing env 7, never fed back"),
    ):
        other = Probe(ctx, f"reuse: {what}")
        try:
            await other.open(alongside=True)
            wrong = other.fault(pack(infer_message(ctx.options, [env], reuse=[True])), clause, what)
            await together(holder.infer([1], reuse=[True], timeout=2 * ctx.timeout), _then_close(wrong, other))
        finally:
            await other.close()
        await holder.feedback([1])
    # Env 0's last feedback ended its episode: what it would reuse is a terminal observation.
    await holder.fault(
        pack(infer_message(ctx.options, [0, 1], reuse=[True, False])),
        C.REUSE_AFTER_TERMINAL,
        "reusing env 0 right after its episode ended",
    )


def _check_reused_answers(
    report: Report,
    probe: Probe,
    first: np.ndarray | None,
    repeat: np.ndarray | None,
    pairs: list[tuple[str, np.ndarray | None, np.ndarray | None]],
) -> None:
    """A deterministic policy answers a batch that reuses observations as it answered it sent in full.

    The suite's observations depend on the env alone, so a reused row, filled
    from the env's last feedback, is the observation sent before.
    """
    if not _comparable(first, repeat):
        return
    if not np.allclose(first, repeat, equal_nan=True, **ROW_TOLERANCE):
        report.info(
            C.REUSE_ROWS,
            "the policy answered the same observations differently: reused answers not compared",
            evidence=probe.transcript,
        )
        return
    for what, reused, full in pairs:
        if _comparable(reused, full):
            report.check(
                np.allclose(reused, full, equal_nan=True, **ROW_TOLERANCE),
                C.REUSE_ROWS,
                f"the answer to {what} equal to the answer to the same envs sent in full",
                f"{summarize(reused, 120)} vs {summarize(full, 120)}",
                probe.transcript,
            )


def _comparable(one: np.ndarray | None, other: np.ndarray | None) -> bool:
    return (
        one is not None
        and other is not None
        and one.dtype.kind in "iuf"
        and other.dtype.kind in "iuf"
        and one.shape == other.shape
    )


async def _malformed_reuse(ctx: PhaseContext, what: str, malformed: Callable[[Any], dict[str, Any]]) -> None:
    """On a connection of its own, after envs 0 and 1 were fed back, so only the form is wrong."""
    probe = Probe(ctx, f"reuse: {what}")
    try:
        await probe.open()
        await probe.cycle([0, 1])
        await probe.fault(pack(malformed(ctx.options)), C.REUSE_MALFORMED, what)
    finally:
        await probe.close()


async def _then_close(step: Awaitable[Any], probe: Probe) -> None:
    """Run a step, then close its connection so a batching server stops waiting for it."""
    try:
        await step
    finally:
        await probe.close()
