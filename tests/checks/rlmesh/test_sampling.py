"""Actions drawn many steps at a time are byte for byte the actions drawn one step at a time."""

from __future__ import annotations

import numpy as np
import pytest

from checks.rlmesh import codec
from checks.rlmesh.proto import spaces_pb2 as S
from checks.rlmesh.sampling import ActionSampler


def elementwise_box(low: list[float], high: list[float], dtype: int, np_dtype: str) -> S.SpaceSpec:
    bounds = S.ElementwiseBounds(low=np.array(low, np_dtype).tobytes(), high=np.array(high, np_dtype).tobytes())
    return S.SpaceSpec(shape=[len(low)], dtype=dtype, box=S.BoxSpec(elementwise=bounds))


SPACES = {
    "discrete": S.SpaceSpec(dtype=S.DATA_TYPE_INT64, discrete=S.DiscreteSpec(n=7, start=-2)),
    "discrete-uint8": S.SpaceSpec(dtype=S.DATA_TYPE_UINT8, discrete=S.DiscreteSpec(n=3)),
    "multi-binary": S.SpaceSpec(shape=[5], dtype=S.DATA_TYPE_INT8, multi_binary=S.MultiBinarySpec()),
    "multi-discrete": S.SpaceSpec(
        shape=[3], dtype=S.DATA_TYPE_INT64, multi_discrete=S.MultiDiscreteSpec(nvec=[2, 9, 4])
    ),
    "box-float": elementwise_box([-1.0, -np.inf, 0.0], [1.0, np.inf, 5.0], S.DATA_TYPE_FLOAT32, "<f4"),
    "box-double": elementwise_box([-1e9, 0.0], [1e9, 1e-3], S.DATA_TYPE_FLOAT64, "<f8"),
    "box-int": elementwise_box([-3, 0], [3, 1000], S.DATA_TYPE_INT16, "<i2"),
    "box-bool": elementwise_box([0, 0], [1, 1], S.DATA_TYPE_BOOL, "?"),
}


@pytest.mark.parametrize("name", sorted(SPACES))
@pytest.mark.parametrize("lanes", [1, 3])
def test_batched_actions_are_the_single_step_actions(name: str, lanes: int) -> None:
    space = codec.space_from_proto(SPACES[name])
    rng = np.random.default_rng([7, lanes])
    one_at_a_time = [codec.sample(space, rng, lanes).SerializeToString() for _ in range(150)]
    sampler = ActionSampler(space, np.random.default_rng([7, lanes]), lanes)
    assert sampler.leaf is not None  # drawn in batches, not one step at a time
    assert [sampler.next().SerializeToString() for _ in range(150)] == one_at_a_time


def test_a_space_of_several_leaves_is_drawn_one_step_at_a_time() -> None:
    spec = S.SpaceSpec(dict=S.DictSpec(keys=["a", "b"], spaces=[SPACES["discrete"], SPACES["box-float"]]))
    space = codec.space_from_proto(spec)
    rng = np.random.default_rng(3)
    one_at_a_time = [codec.sample(space, rng, 2).SerializeToString() for _ in range(20)]
    sampler = ActionSampler(space, np.random.default_rng(3), 2)
    assert sampler.leaf is None
    assert [sampler.next().SerializeToString() for _ in range(20)] == one_at_a_time
