"""Seeding and lane rules as pure functions: observed lane states, responses and timings in, Decisions out.

The seeding and lanes phases reset, step and time; these judges compare what
came back (each lane's observation bytes, a subset step's rows and echoed
indices, round-trip times) with what the protocol asks.
"""

from __future__ import annotations

from typing import Any

from checks.core import seconds
from checks.decision import Decision, Judged, check, info, missed, passed, unsupported
from checks.rlmesh import codec
from checks.rlmesh.client import error_text
from checks.rlmesh.judging import describe, kind_of, refused
from checks.rlmesh.proto import env_pb2, spaces_pb2

Record = tuple[Any, ...]  # (label, per-lane observation bytes, then rewards and masks as bytes)
OVERLAP_FLOOR = 0.020  # lane steps faster than this cannot show overlap above scheduling noise
OVERLAP_SHARE = 0.8
NO_SUBSET_STEP = "the endpoint does not advertise subset_step"

# ---------------------------------------------------------------- Seeding


def first_difference(one: list[Record], two: list[Record], lanes: int) -> str | None:
    for a, b in zip(one, two, strict=False):
        for lane in range(lanes):
            if a[1][lane] != b[1][lane]:
                return f"{a[0]}: lane {lane} observation differs"
        if a[2:] != b[2:]:
            return f"{a[0]}: rewards or masks differ ({a[2:]} vs {b[2:]})"
    return None


def seeded_replay(one: list[Record], two: list[Record], lanes: int, seeds: list[int]) -> Decision:
    """Two rollouts from the same seed list and actions are identical on every lane."""
    difference = first_difference(one, two, lanes)
    return check(
        difference is None,
        "rlmesh.s4.seeded-replay",
        expected=f"identical observations, rewards and masks on all {lanes} lane(s) for seeds {seeds[:8]}",
        actual=difference or f"identical over a reset and {len(one) - 1} steps",
    )


def seed_chain(chains: list[list[bytes]]) -> Decision:
    """Each chain: the lane states of an unseeded reset right after a seeded one; they repeat."""
    same = chains[0] == chains[1]
    return check(
        same,
        "rlmesh.s4.seed-chain",
        expected="reset(seeds) then reset() gives the same observation twice",
        actual="identical" if same else "the unseeded reset after a seeded one differed",
    )


def seed_matters(first: list[bytes], other: list[bytes], other_seeds: list[int]) -> Decision:
    """Another seed list moves some lane's first observation."""
    moved = other != first
    return check(
        moved,
        "rlmesh.s4.seed-matters",
        expected="another seed list changes some lane's first observation",
        actual="changed" if moved else f"seeds {other_seeds[:8]} gave the same observations",
    )


def one_lane_seed() -> Decision:
    return unsupported("rlmesh.s4.seed-all-lanes", "one lane: a single seed is the whole seed list")


def single_seed_refused(response: env_pb2.JoinResponse) -> Decision:
    """Refusing one seed for many lanes is allowed: nothing is left unseeded."""
    return passed("rlmesh.s4.seed-all-lanes", actual=f"a single seed was refused: {error_text(response.error)}")


def seed_all_lanes(obs: codec.Space, observed: list[spaces_pb2.SpaceValue], lanes: int, seed: int) -> Decision:
    """Two resets with the single seed `seed`: every lane repeats its observation."""
    states = [[codec.lane_bytes(obs, value, lanes, lane) for lane in range(lanes)] for value in observed]
    lines, unseeded = [], []
    for lane in range(lanes):
        if states[0][lane] == states[1][lane]:
            lines.append(f"lane {lane}: identical")
            continue
        unseeded.append(lane)
        lines.append(
            f"lane {lane}: differs - first {codec.lane_summary(obs, observed[0], lanes, lane)}, "
            f"second {codec.lane_summary(obs, observed[1], lanes, lane)}"
        )
    return check(
        not unseeded,
        "rlmesh.s4.seed-all-lanes",
        expected=f"reset(seeds=[{seed}]) twice gives identical observations on all {lanes} lanes",
        actual=(f"lanes {unseeded} were left unseeded by reset(seeds=[{seed}]): " if unseeded else "")
        + "; ".join(lines),
    )


# ---------------------------------------------------------------- Subset steps and partial resets


def without_subset_step(response: env_pb2.JoinResponse, lane: int) -> list[Decision]:
    """No subset_step advertised: a subset step is a recoverable UNSUPPORTED, and the subset clauses are not offered."""
    error = response.error
    honest = check(
        kind_of(response) == "error" and error.code == env_pb2.ENV_ERROR_CODE_UNSUPPORTED and error.is_recoverable,
        "rlmesh.h4.capability-honest",
        expected="no subset_step advertised: a recoverable UNSUPPORTED",
        actual=f"subset step on lane {lane}: {describe(response)}",
    )
    offered = ("rlmesh.l1.subset-step", "rlmesh.l1.partial-reset", "rlmesh.l2.lanes-overlap")
    return [honest, *(unsupported(clause, NO_SUBSET_STEP) for clause in offered)]


def with_subset_step(response: env_pb2.JoinResponse, lane: int) -> Judged[None]:
    """subset_step advertised: a one-lane subset step is answered for that lane alone, its index echoed.

    An error other than UNSUPPORTED refuses a valid request; a broken answer leaves nothing further to judge.
    """
    where = f"subset step on lane {lane}"
    if kind_of(response) == "error" and response.error.code != env_pb2.ENV_ERROR_CODE_UNSUPPORTED:
        return refused(f"{where}: {describe(response)}")
    body, stepped = response.step, kind_of(response) == "step"
    ok = stepped and list(body.env_indices) == [lane] and len(body.rewards) == len(body.terminated_mask) == 1
    shown = f", env_indices {list(body.env_indices)}, {len(body.rewards)} rewards" if stepped else ""
    honest = check(
        ok,
        "rlmesh.h4.capability-honest",
        expected=f"a one-lane step response echoing [{lane}]",
        actual=f"{where}: {describe(response)}{shown}",
    )
    return Judged(None, [honest], None if ok else "the subset step itself is broken (see rlmesh.h4.capability-honest)")


def one_lane_subset() -> list[Decision]:
    return [
        unsupported("rlmesh.l1.subset-step", "one lane: no second lane to leave alone"),
        unsupported("rlmesh.l2.lanes-overlap", "one lane: nothing to overlap with"),
    ]


def partial_reset(
    obs: codec.Space, full: spaces_pb2.SpaceValue, lanes: int, lane: int, response: env_pb2.JoinResponse, where: str
) -> Decision:
    """A one-lane reset answers with that lane's observation, the one a full reset with the same seed gave it."""
    if kind_of(response) != "reset":
        return missed(
            "rlmesh.l1.partial-reset", expected="a one-lane reset response", actual=f"{where}: {describe(response)}"
        )
    got = response.reset.observation
    same = codec.lane_bytes(obs, got, 1, 0) == codec.lane_bytes(obs, full, lanes, lane)
    shown = (
        "identical"
        if same
        else f"{codec.lane_summary(obs, got, 1, 0)} vs full reset {codec.lane_summary(obs, full, lanes, lane)}"
    )
    return check(
        same, "rlmesh.l1.partial-reset", expected="the lane's observation from a full reset", actual=f"{where}: {shown}"
    )


def subset_fields(response: env_pb2.JoinResponse, a: int, b: int) -> Decision:
    """A step of lanes [a, b] answers with two-lane fields and echoes [a, b]."""
    body, stepped = response.step, kind_of(response) == "step"
    aligned = (
        stepped
        and list(body.env_indices) == [a, b]
        and len(body.rewards) == 2
        and len(body.terminated_mask) == 2
        and len(body.truncated_mask) == 2
    )
    shown = (
        f", env_indices {list(body.env_indices)}, {len(body.rewards)} rewards, "
        f"{len(body.terminated_mask)}/{len(body.truncated_mask)} mask bytes"
        if stepped
        else ""
    )
    return check(
        aligned,
        "rlmesh.l1.subset-step",
        expected=f"two-lane fields with env_indices [{a}, {b}]",
        actual=f"subset step on [{a}, {b}]: {describe(response)}{shown}",
    )


def lane_not_replayable(alone: list[bytes], lane: int) -> Decision | None:
    """Whether lane `lane` stepped alone twice from the same seed repeats; if not, untouched lanes are not judged."""
    if alone[0] == alone[1]:
        return None
    return info(
        "rlmesh.l1.subset-step", actual=f"lane {lane} is not deterministic under a seed; untouched lanes not judged"
    )


def untouched(alone: bytes, after_other: bytes, a: int, b: int) -> Decision:
    """Lane b after "step a, then step b" equals lane b after "step b" alone."""
    same = after_other == alone
    return check(
        same,
        "rlmesh.l1.subset-step",
        expected=f"lane {b} not advanced by a step of lane {a}",
        actual="untouched" if same else f"lane {b} moved when only lane {a} was stepped",
    )


def rows_follow_lanes(rows: list[bytes], solo: dict[int, bytes], echoed: list[int], a: int, b: int) -> Decision:
    """A step of lanes [b, a]: each row is what its lane gives stepped alone, and [b, a] is echoed in that order."""
    wrong = [lane for lane, row in ((b, rows[0]), (a, rows[1])) if row != solo[lane]]
    rows_text = "rows match their lanes" if not wrong else f"the rows for lanes {wrong} differ from those lanes alone"
    return check(
        not wrong and echoed == [b, a],
        "rlmesh.l1.subset-step",
        expected=f"env_indices [{b}, {a}] echoed in that order, each row what that lane gives stepped alone",
        actual=f"env_indices {echoed[:8]}; {rows_text}",
    )


# ---------------------------------------------------------------- Overlap and per-lane order


def lanes_overlap(alone_a: float, alone_b: float, pair: float, rounds: int, a: int, b: int) -> Decision:
    """Two lanes' steps in flight at once finish in under OVERLAP_SHARE of their time one after the other."""
    text = (
        f"lane {a} alone {seconds(alone_a)}, lane {b} alone {seconds(alone_b)}, both in flight at best "
        f"{seconds(pair)} over {rounds} rounds (one after the other: about {seconds(alone_a + alone_b)})"
    )
    if min(alone_a, alone_b) < OVERLAP_FLOOR:
        return info("rlmesh.l2.lanes-overlap", actual=f"{text}; too fast to tell overlap from noise")
    return check(
        pair < OVERLAP_SHARE * (alone_a + alone_b),
        "rlmesh.l2.lanes-overlap",
        expected=f"the pair in under {OVERLAP_SHARE:.0%} of the two steps' time",
        actual=text,
    )


def order_not_replayable(reference: list[bytes], again: list[bytes]) -> Decision | None:
    """Whether two sequential replays of the same steps agree; if not, pipelined order is not judged."""
    if again == reference:
        return None
    return info("rlmesh.l3.lane-fifo", actual="the lane is not deterministic under a seed; order not judged")


def out_of_order(reference: list[bytes], pipelined: list[bytes]) -> list[int]:
    """The 1-based positions where pipelined steps' results differ from the sequential replay."""
    return [k + 1 for k, (want, got) in enumerate(zip(reference, pipelined, strict=True)) if got != want]


def lane_fifo(wrong: list[int], tries: int, depth: int) -> Decision:
    """Pipelined steps of one lane matched the sequential replay in every try (`wrong`: the first try's misfits)."""
    return check(
        not wrong,
        "rlmesh.l3.lane-fifo",
        expected=f"{depth} pipelined steps match a sequential replay, every try",
        actual=f"on try {tries}, responses {wrong} of {depth} differ from the sequential replay (applied out of order)"
        if wrong
        else f"in order over {tries} tries",
    )
