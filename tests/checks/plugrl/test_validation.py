"""The one PlugRL infer judge, on hand-built messages: the rule each infer breaks, for both sides.

The reference server refuses (Malformed) exactly the infers the judge finds a
broken rule in, and the plugrl-client suite judges each rule under a clause.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from checks.errors import Malformed
from checks.plugrl.validation import ReuseCache, check_feedback, check_infer, read_infer


def infer(envs: list[int], rows: int | None = None, **changes: Any) -> dict[str, Any]:
    n = len(envs) if rows is None else rows
    message: dict[str, Any] = {
        "message_type": "infer",
        "data": {"images": {}, "states": {"s": np.zeros((n, 2))}, "text": np.asarray(["x"] * n)},
        "env_indices": np.asarray(envs, dtype=np.int64),
        "step_ids": np.zeros(len(envs), dtype=np.int64),
    }
    for key, value in changes.items():
        if value is None:
            del message[key]
        else:
            message[key] = value
    return message


HELD = {0: False, 1: True}  # env 0 fed back mid-episode, env 1 at its episode's end


@pytest.mark.parametrize(
    ("message", "offered", "rule", "why"),
    [
        (infer([0, 1], step_ids=None), True, "infer-form", "the infer has no step_ids"),
        (infer([0, 0]), True, "infer-form", "env_indices repeats an env"),
        (infer([]), True, "infer-form", "names no env"),
        (infer([0], env_indices=np.asarray([0.0])), True, "infer-form", "integer ndarray"),
        (infer([0, 1], step_ids=np.zeros(3, dtype=np.int64)), True, "infer-form", "step_ids is not an array of 2"),
        (infer([0], rows=0, reuse=np.asarray([True])), False, "reuse-offered", "does not list"),
        (infer([0], rows=0, reuse=np.asarray([1])), True, "reuse-held", "not a |b1 array"),
        (infer([2], rows=0, reuse=np.asarray([True])), True, "reuse-held", "never fed back"),
        (infer([1], rows=0, reuse=np.asarray([True])), True, "reuse-held", "terminal observation"),
        (infer([0, 2], reuse=np.asarray([True, False])), True, "observation-form", "2 rows for 1 envs"),
        (infer([0, 1], rows=3), True, "observation-form", "3 rows for 2 envs"),
        (infer([0], data={"states": {}}), True, "observation-form", "exactly images, states and text"),
        (
            infer([0], data={"images": {"cam": np.zeros((1, 2, 2), np.uint8)}, "states": {}, "text": ["x"]}),
            True,
            "observation-form",
            "not uint8 [n,h,w,c]",
        ),
    ],
)
def test_each_broken_rule_is_named_and_refused_by_the_server(message, offered, rule, why):
    reading = read_infer(message, reuse_offered=offered, held=HELD)
    assert reading.broken == rule and why in reading.why
    assert rule not in reading.kept
    cache = ReuseCache(ended=dict(HELD), features={0: 0.5, 1: 0.5})
    with pytest.raises(Malformed, match="."):
        check_infer(message, offered, cache)


def test_a_valid_infer_keeps_every_rule_it_was_checked_against():
    plain = read_infer(infer([3, 1]), reuse_offered=False, held={})
    assert plain.broken is None and plain.kept == ("infer-form", "observation-form")
    assert plain.envs == [3, 1] and plain.reuse == [False, False] and plain.rows == 2
    reusing = read_infer(infer([0, 2], rows=1, reuse=np.asarray([True, False])), reuse_offered=True, held=HELD)
    assert reusing.broken is None
    assert reusing.kept == ("infer-form", "reuse-offered", "reuse-held", "observation-form")
    assert reusing.sent_envs == [2]


def test_the_server_fills_reused_rows_from_its_cache():
    cache = ReuseCache(ended={0: False}, features={0: 7.0})
    envs, features = check_infer(infer([0, 1], rows=1, reuse=np.asarray([True, False])), True, cache)
    assert envs == [0, 1] and features.tolist() == [7.0, 0.0]


def test_a_message_of_another_type_is_refused():
    with pytest.raises(Malformed, match="expected a infer message"):
        check_infer({"message_type": "feedback"}, True, ReuseCache())


def test_a_feedback_whose_info_cannot_be_split_is_refused():
    obs = {"images": {}, "states": {}, "text": ["a", "b"]}
    feedback = {
        "message_type": "feedback",
        "env_indices": np.asarray([0, 1]),
        "step_ids": np.zeros(2),
        "data": {
            "obs": obs,
            "rewards": np.zeros(2, np.float32),
            "terminated": np.zeros(2, bool),
            "truncated": np.zeros(2, bool),
            "info": {"task": "pick"},
        },
    }
    with pytest.raises(Malformed, match="cannot be split into 2"):
        check_feedback(feedback)
    feedback["data"]["info"] = {}
    assert check_feedback(feedback)[0] == [0, 1]
