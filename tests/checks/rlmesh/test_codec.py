"""The rlmesh value codec: contracts read strictly, leaves sized by dtype x shape x lanes, domains checked."""

from __future__ import annotations

import numpy as np
import pytest

from checks.rlmesh import codec
from checks.rlmesh.proto import spaces_pb2 as S


def box(low: float, high: float, shape=(2,), dtype=S.DATA_TYPE_FLOAT32, np_dtype="<f4", elementwise=False):
    count = int(np.prod(shape)) if elementwise else 1
    bounds = dict(low=np.full(count, low, np_dtype).tobytes(), high=np.full(count, high, np_dtype).tobytes())
    spec = (
        S.BoxSpec(elementwise=S.ElementwiseBounds(**bounds))
        if elementwise
        else S.BoxSpec(uniform=S.UniformBounds(**bounds))
    )
    return S.SpaceSpec(shape=list(shape), dtype=dtype, box=spec)


def discrete(n: int, start: int = 0):
    return S.SpaceSpec(dtype=S.DATA_TYPE_INT64, discrete=S.DiscreteSpec(n=n, start=start))


COMPOSITE = S.SpaceSpec(
    dict=S.DictSpec(
        keys=["a", "b", "c", "d", "e"],
        spaces=[
            box(-1, 1, elementwise=True),
            discrete(3, start=1),
            S.SpaceSpec(shape=[3], dtype=S.DATA_TYPE_UINT8, multi_binary=S.MultiBinarySpec()),
            S.SpaceSpec(shape=[2], dtype=S.DATA_TYPE_INT64, multi_discrete=S.MultiDiscreteSpec(nvec=[2, 5])),
            S.SpaceSpec(dtype=S.DATA_TYPE_UINT8, text=S.TextSpec(min_length=1, max_length=4, charset="xyz")),
        ],
    )
)


@pytest.mark.parametrize(
    "spec, complaint",
    [
        (S.SpaceSpec(shape=[2], dtype=S.DATA_TYPE_FLOAT32), "no space kind"),
        (box(0, 1, dtype=S.DATA_TYPE_UNSPECIFIED), "dtype"),
        (box(0, 1, np_dtype="<f8"), "Box uniform low is 8 bytes, expected 1 x 4"),
        (box(2, 1), "low must be <= high"),
        (discrete(0), "n=0 must be positive"),
        (S.SpaceSpec(dict=S.DictSpec(keys=["a", "b"], spaces=[discrete(2)])), "2 keys but 1 spaces"),
        (S.SpaceSpec(shape=[3], dtype=S.DATA_TYPE_INT64, multi_discrete=S.MultiDiscreteSpec(nvec=[2, 2])), "nvec"),
        (S.SpaceSpec(dtype=S.DATA_TYPE_UINT8, text=S.TextSpec(min_length=3, max_length=1)), "Text lengths"),
        (S.SpaceSpec(dict=S.DictSpec(keys=["a", "a"], spaces=[discrete(2), discrete(3)])), "keys repeat"),
        (S.SpaceSpec(dtype=S.DATA_TYPE_INT8, discrete=S.DiscreteSpec(n=300)), "values 0..299 do not fit its dtype"),
        (S.SpaceSpec(shape=[1], dtype=S.DATA_TYPE_UINT8, multi_discrete=S.MultiDiscreteSpec(nvec=[257])), "do not fit"),
        # Element counts are exact integers: 2**62 + 1 by 4 wraps to 4 in 64-bit arithmetic.
        (S.SpaceSpec(shape=[2**62 + 1, 4], dtype=S.DATA_TYPE_FLOAT32, box=S.BoxSpec(unbounded=True)), "message limit"),
        (S.SpaceSpec(dtype=S.DATA_TYPE_UINT8, text=S.TextSpec(min_length=10**12, max_length=10**12)), "message limit"),
    ],
)
def test_broken_contract_spaces_are_refused(spec, complaint):
    with pytest.raises(codec.ContractError, match=complaint):
        codec.space_from_proto(spec)


def test_leaves_are_sized_by_dtype_shape_and_lanes():
    space = codec.space_from_proto(box(-1, 1))
    good = S.SpaceValue(leaves=[np.zeros((3, 2), "<f4").tobytes()])
    assert codec.decode(space, good, 3)[0].shape == (3, 2)
    with pytest.raises(codec.ValueMismatch, match="48 bytes, expected 3 lanes x 2 x 4"):
        codec.decode(space, S.SpaceValue(leaves=[np.zeros((3, 2), "<f8").tobytes()]), 3)
    with pytest.raises(codec.ValueMismatch, match="2 leaves, the space has 1"):
        codec.decode(space, S.SpaceValue(leaves=[b"", b""]), 1)


def test_domains_are_checked_leaf_by_leaf():
    space = codec.space_from_proto(box(-1, 1))
    outside = codec.outside(
        space, codec.decode(space, S.SpaceValue(leaves=[np.array([[0, 0], [0, 1.5]], "<f4").tobytes()]), 2)
    )
    assert outside is not None and "lane 1 element [1]" in outside
    nan = codec.outside(space, codec.decode(space, S.SpaceValue(leaves=[np.array([np.nan, 0], "<f4").tobytes()]), 1))
    assert nan is not None and "NaN" in nan
    shifted = codec.space_from_proto(discrete(3, start=1))
    assert codec.outside(shifted, [np.array([3])]) is None
    assert "outside Discrete [1, 4)" in codec.outside(shifted, [np.array([4])])


def test_samples_of_every_kind_stay_inside_and_text_round_trips():
    space = codec.space_from_proto(COMPOSITE)
    assert [path for path, _ in codec.leaves_of(space)] == ["a", "b", "c", "d", "e"]
    rng = np.random.default_rng(3)
    for lanes in (1, 4):
        decoded = codec.decode(space, codec.sample(space, rng, lanes), lanes)
        assert codec.outside(space, decoded) is None
        assert len(decoded[4]) == lanes and all(set(text) <= set("xyz") for text in decoded[4])
    text_leaf = S.SpaceValue(leaves=[*codec.sample(space, rng, 1).leaves[:4], codec.encode_text(["xyzzy"])])
    assert "length 5 outside 1..4" in codec.outside(space, codec.decode(space, text_leaf, 1))


def test_a_large_legal_space_is_beyond_the_checker_not_broken():
    with pytest.raises(codec.BeyondChecker):
        codec.space_from_proto(S.SpaceSpec(shape=[1 << 25], dtype=S.DATA_TYPE_UINT8, box=S.BoxSpec(unbounded=True)))


def test_a_space_without_leaves_has_no_malformed_variant():
    empty = codec.space_from_proto(S.SpaceSpec(tuple=S.TupleSpec()))
    assert codec.sample(empty, np.random.default_rng(0), 2).leaves == []
    assert codec.out_of_domain(empty, 2) is None and codec.wrong_dtype(empty, 2) is None


def test_malformed_actions_are_really_malformed():
    space = codec.space_from_proto(discrete(2))
    wrong_width = codec.wrong_dtype(space, 1)
    assert len(wrong_width.leaves[0]) == 4
    bad = codec.out_of_domain(space, 2)
    assert codec.outside(space, codec.decode(space, bad, 2)) is not None


def test_meta_maps_become_plain_python():
    meta = S.MetaMap(
        entries={
            "n": S.MetaValue(),
            "i": S.MetaValue(int_value=-7),
            "s": S.MetaValue(string_value="x"),
            "l": S.MetaValue(list_value=S.MetaList(items=[S.MetaValue(bool_value=True)])),
            "m": S.MetaValue(map_value=S.MetaMap(entries={"f": S.MetaValue(double_value=1.5)})),
        }
    )
    assert codec.map_to_python(meta) == {"n": None, "i": -7, "s": "x", "l": [True], "m": {"f": 1.5}}
