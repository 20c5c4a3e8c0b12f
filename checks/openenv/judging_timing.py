"""Pure judgements of timings: replies in time, latency figures and bound, and whether a group's steps overlap."""

from __future__ import annotations

from checks.core import percentile, seconds
from checks.decision import Decision, check, info, missed, unsupported
from checks.openenv.session import Wait

SLOW_STEP = 0.020  # below this a step is too quick for scheduling noise to be told from serving order
OVERLAP_SHARE = 0.8  # a group overlaps when it takes under this share of its steps' sum


def reply_in_time(wait: Wait) -> Decision:
    """openenv.ws.reply-in-time on one wait for a reply."""
    if wait.answered:
        return check(
            True,
            "openenv.ws.reply-in-time",
            expected=f"a reply within {wait.timeout:g}s",
            actual=f"{wait.asked} answered in time",
        )
    return missed(
        "openenv.ws.reply-in-time",
        expected=f"a reply to {wait.asked} within {wait.timeout:g}s",
        actual=f"nothing arrived within {wait.timeout:g}s; the session was closed, since any "
        "later frame could be the late reply",
    )


def latency(alone: list[float], together: list[float], size: int, bound_ms: float | None) -> list[Decision]:
    """openenv.latency.figures (recorded), and openenv.latency.bound when the target sets one."""
    single, group_p99 = percentile(alone, 0.5), percentile(together, 0.99)
    figures = info(
        "openenv.latency.figures",
        actual=f"one socket: reset+step median {seconds(single)}, p99 {seconds(percentile(alone, 0.99))} "
        f"over {len(alone)}; {size} parallel sessions: reset+step p99 {seconds(group_p99)} over {len(together)}",
    )
    if bound_ms is None:
        return [figures, unsupported("openenv.latency.bound", "the target sets no latency_bound_ms")]
    return [
        figures,
        check(
            single * 1000 <= bound_ms and group_p99 * 1000 <= bound_ms,
            "openenv.latency.bound",
            expected=f"median and group p99 within {bound_ms:g} ms",
            actual=f"median {seconds(single)}, group p99 {seconds(group_p99)}",
        ),
    ]


def overlap_not_judged(why: str) -> Decision:
    return info("openenv.concurrency.overlap", actual=f"not judged, because {why}")


def too_quick(single: float) -> Decision | None:
    """openenv.concurrency.overlap not judged when one step is too quick to tell overlap from noise."""
    if single >= SLOW_STEP:
        return None
    return overlap_not_judged(f"one step takes {seconds(single)}, under {seconds(SLOW_STEP)}")


def overlapped(single: float, group: float, size: int) -> bool:
    return group < OVERLAP_SHARE * size * single


def overlap(single: float, group: float, size: int, rounds: int) -> Decision:
    """openenv.concurrency.overlap on the medians of one step alone and of the group's steps sent at once."""
    total = size * single
    held = overlapped(single, group, size)
    return check(
        held,
        "openenv.concurrency.overlap",
        expected=f"{size} steps sent at once finish in under {OVERLAP_SHARE:.0%} of {size} x one step alone",
        actual=f"the group's steps took {seconds(group)}; one step alone {seconds(single)}, "
        f"{size} of them {seconds(total)} ({group / total:.0%}; medians of {rounds} rounds)"
        + ("" if held else ": the sessions were served one at a time"),
    )
