"""The seeding and lanes judges on built lane states, responses and timings: no server, no report."""

from __future__ import annotations

import numpy as np

from checks.rlmesh import codec
from checks.rlmesh import judging_lanes as J
from checks.rlmesh.proto import env_pb2 as E
from checks.rlmesh.proto import spaces_pb2 as S
from tests.checks.decisions import held

OBS = codec.Space("box", (2,), np.dtype("<f4"), np.full(2, -9, np.float32), np.full(2, 9, np.float32))


def _value(*rows: tuple[float, float]) -> S.SpaceValue:
    return S.SpaceValue(leaves=[np.array(rows, np.float32).tobytes()])


def test_seeded_replay_names_the_first_difference():
    one = [("reset", [b"a", b"b"]), ("step 1", [b"c", b"d"], b"r", b"\0\0", b"\0\0")]
    assert held(J.seeded_replay(one, list(one), 2, [0, 1])) is True
    lane = J.seeded_replay(one, [one[0], ("step 1", [b"c", b"X"], b"r", b"\0\0", b"\0\0")], 2, [0, 1])
    assert held(lane) is False and lane.actual == "step 1: lane 1 observation differs"
    masks = J.seeded_replay(one, [one[0], ("step 1", [b"c", b"d"], b"r", b"\1\0", b"\0\0")], 2, [0, 1])
    assert held(masks) is False and masks.actual.startswith("step 1: rewards or masks differ")


def test_seed_chain_and_seed_matters():
    assert held(J.seed_chain([[b"a"], [b"a"]])) is True
    assert held(J.seed_chain([[b"a"], [b"b"]])) is False
    assert held(J.seed_matters([b"a", b"b"], [b"a", b"c"], [1000, 1001])) is True
    assert held(J.seed_matters([b"a", b"b"], [b"a", b"b"], [1000, 1001])) is False


def test_a_single_seed_must_reach_every_lane():
    same = _value((1, 2), (3, 4), (5, 6))
    assert held(J.seed_all_lanes(OBS, [same, same], 3, 0)) is True
    moved = J.seed_all_lanes(OBS, [same, _value((1, 2), (0, 0), (5, 6))], 3, 0)
    assert held(moved) is False
    assert moved.actual.startswith(
        "lanes [1] were left unseeded by reset(seeds=[0]): lane 0: identical; lane 1: differs"
    )
    refused = E.JoinResponse(error=E.EnvError(code=E.ENV_ERROR_CODE_INVALID_ACTION, is_recoverable=True))
    assert held(J.single_seed_refused(refused)) is True
    assert held(J.one_lane_seed()) == "unsupported"


def _stepped(indices: list[int], rewards: int | None = None) -> E.JoinResponse:
    width = len(indices) if rewards is None else rewards
    step = E.StepResponse(
        rewards=[0.0] * width, terminated_mask=b"\0" * width, truncated_mask=b"\0" * width, env_indices=indices
    )
    return E.JoinResponse(step=step)


def test_capability_honesty_with_and_without_subset_step():
    unsupported = E.JoinResponse(error=E.EnvError(code=E.ENV_ERROR_CODE_UNSUPPORTED, is_recoverable=True))
    decisions = J.without_subset_step(unsupported, 0)
    assert [(d.clause_id, held(d)) for d in decisions][0] == ("rlmesh.h4.capability-honest", True)
    assert {held(d) for d in decisions[1:]} == {"unsupported"}
    # A silent full-width step where none was offered is dishonest.
    assert held(J.without_subset_step(_stepped([], rewards=2), 0)[0]) is False
    honest = J.with_subset_step(_stepped([1]), 1)
    assert [held(d) for d in honest.decisions] == [True] and honest.stop is None
    wrong_lane = J.with_subset_step(_stepped([0]), 1)
    assert [held(d) for d in wrong_lane.decisions] == [False] and "broken" in wrong_lane.stop
    assert [held(d) for d in J.with_subset_step(_stepped([1], rewards=2), 1).decisions] == [False]  # two rewards
    # UNSUPPORTED where subset steps are advertised is dishonest; any other error refuses a valid request.
    assert [held(d) for d in J.with_subset_step(unsupported, 1).decisions] == [False]
    internal = E.JoinResponse(error=E.EnvError(code=E.ENV_ERROR_CODE_INTERNAL, is_recoverable=True))
    refusal = J.with_subset_step(internal, 1)
    assert [d.clause_id for d in refusal.decisions] == ["rlmesh.s1.answered"] and "refused" in refusal.stop


def test_partial_reset_must_equal_the_full_reset_of_that_lane():
    full = _value((1, 2), (3, 4))
    assert held(
        J.partial_reset(OBS, full, 2, 1, E.JoinResponse(reset=E.ResetResponse(observation=_value((3, 4)))), "w")
    )
    other = J.partial_reset(OBS, full, 2, 1, E.JoinResponse(reset=E.ResetResponse(observation=_value((1, 2)))), "w")
    assert held(other) is False and "vs full reset" in other.actual
    assert held(J.partial_reset(OBS, full, 2, 1, _stepped([1]), "w")) is False


def test_subset_step_fields_untouched_lanes_and_rows_in_named_order():
    assert held(J.subset_fields(_stepped([0, 1]), 0, 1)) is True
    assert held(J.subset_fields(_stepped([1, 0]), 0, 1)) is False
    assert J.lane_not_replayable([b"x", b"x"], 1) is None
    assert held(J.lane_not_replayable([b"x", b"y"], 1)) is None  # information: not judged
    assert held(J.untouched(b"x", b"x", 0, 1)) is True
    assert held(J.untouched(b"x", b"y", 0, 1)) is False
    solo = {0: b"row-a", 1: b"row-b"}
    assert held(J.rows_follow_lanes([b"row-b", b"row-a"], solo, [1, 0], 0, 1)) is True
    sorted_rows = J.rows_follow_lanes([b"row-a", b"row-b"], solo, [0, 1], 0, 1)  # answered as if named [0, 1]
    assert held(sorted_rows) is False and "the rows for lanes [1, 0] differ" in sorted_rows.actual
    assert held(J.rows_follow_lanes([b"row-b", b"row-a"], solo, [0, 1], 0, 1)) is False  # rows right, echo sorted


def test_lanes_overlap_needs_slow_enough_steps_and_a_pair_under_the_share():
    assert held(J.lanes_overlap(0.005, 0.005, 0.010, 5, 0, 1)) is None  # too fast to tell
    assert held(J.lanes_overlap(0.030, 0.030, 0.032, 5, 0, 1)) is True
    assert held(J.lanes_overlap(0.030, 0.030, 0.059, 5, 0, 1)) is False  # about the sum: serialized


def test_lane_order():
    reference = [b"1", b"2", b"3", b"4"]
    assert J.order_not_replayable(reference, list(reference)) is None
    assert held(J.order_not_replayable(reference, [b"1", b"2", b"3", b"5"])) is None
    assert J.out_of_order(reference, [b"1", b"3", b"2", b"4"]) == [2, 3]
    assert held(J.lane_fifo([], 50, 4)) is True
    late = J.lane_fifo([2, 3], 7, 4)
    assert held(late) is False and late.actual.startswith("on try 7, responses [2, 3] of 4")
