"""The comparator, value kind by value kind: what is equal, what diverges, and how it is named."""

import json
import math
import struct

import numpy as np
import pytest

from checks.parity.compare import compare, format_path
from checks.parity.encoding import decode, encode
from checks.parity.projections import Projection
from checks.parity.values import Digest, NotCanonical, canonical


def diff(left, right, projections=(), cap=64 * 1024):
    return compare(canonical(left, cap), canonical(right, cap), tuple(projections))


def last_bit(value: float) -> float:
    return struct.unpack(">d", (struct.unpack(">Q", struct.pack(">d", value))[0] ^ 1).to_bytes(8, "big"))[0]


def test_identical_trees_have_no_divergence():
    value = {"a": [1, 2.5, "x", None, True, b"\x00"], "b": np.arange(6, dtype=np.int64).reshape(2, 3)}
    result = diff(value, dict(reversed(list(value.items()))))
    assert result.identical and result.count == 0 and result.first is None


def test_a_float_differing_in_its_last_bit_diverges_with_both_byte_strings():
    result = diff({"reward": 0.1}, {"reward": last_bit(0.1)})
    assert result.count == 1
    first = result.first
    assert first.path == "reward"
    assert first.left.bytes_hex == "3fb999999999999a" and first.right.bytes_hex == "3fb999999999999b"


def test_negative_zero_is_not_zero():
    result = diff([0.0], [-0.0])
    assert result.first.path == "[0]" and result.first.right.bytes_hex == "8000000000000000"


def test_nan_payloads_are_compared_and_equal_nans_match():
    quiet = float("nan")
    other = struct.unpack(">d", bytes.fromhex("7ff8000000000001"))[0]
    assert math.isnan(other)
    assert diff([quiet], [quiet]).identical
    assert diff([quiet], [other]).count == 1


def test_int_and_float_of_the_same_value_diverge():
    assert "int on the left, a float64" in diff({"x": 1}, {"x": 1.0}).first.reason


def test_big_ints_are_exact():
    assert diff(2**80, 2**80).identical and not diff(2**80, 2**80 + 1).identical


def test_array_element_named_by_index():
    left = np.linspace(0, 1, 200)
    right = left.copy()
    right[117] = last_bit(float(right[117]))
    result = diff({"sample": [{"rollout_log_probs": left}]}, {"sample": [{"rollout_log_probs": right}]})
    assert result.first.path == "sample[0].rollout_log_probs[117]"
    assert result.count == 1
    assert result.first.left.bytes_hex != result.first.right.bytes_hex


def test_a_multi_dimensional_element_is_named_by_all_its_indices():
    left = np.zeros((3, 4), dtype=np.float32)
    right = left.copy()
    right[2, 1] = -0.0
    assert diff({"a": left}, {"a": right}).first.path == "a[2,1]"


def test_arrays_differing_in_dtype_only_diverge():
    result = diff({"a": np.zeros(4, dtype="<f4")}, {"a": np.zeros(4, dtype="<i4")})
    assert result.first.reason == "dtype <f4 on the left, <i4 on the right"


def test_arrays_differing_in_shape_only_diverge():
    result = diff({"a": np.zeros((2, 3))}, {"a": np.zeros((3, 2))})
    assert "shape" in result.first.reason


def test_byte_order_counts():
    assert not diff(np.ones(2, dtype="<f8"), np.ones(2, dtype=">f8")).identical


def test_object_arrays_have_no_canonical_form():
    with pytest.raises(NotCanonical):
        canonical(np.array([object()], dtype=object))


def test_numpy_scalars_compare_by_dtype_and_bytes():
    assert diff(np.float32(1.0), np.float32(1.0)).identical
    assert not diff(np.float32(1.0), np.float64(1.0)).identical


def test_maps_compare_by_sorted_keys_and_name_missing_keys():
    result = diff({"b": 1, "a": 2}, {"a": 2, "c": 1})
    assert [d.path for d in result.divergences] == ["b", "c"]
    assert result.divergences[0].reason == "only on the left"


def test_lists_of_different_length_diverge_at_the_first_missing_index():
    result = diff({"x": [1, 2, 3]}, {"x": [1, 2]})
    assert result.first.path == "x[2]" and result.count == 1


def test_strings_bytes_bools_and_null():
    assert diff(["é", b"\x01", True, None], ["é", b"\x01", True, None]).identical
    assert diff(["a"], ["b"]).first.path == "[0]"
    assert not diff([b"\x01"], ["\x01"]).identical
    assert not diff([True], [1]).identical
    assert not diff([None], [""]).identical


def test_values_over_the_cap_compare_by_length_and_sha256():
    big = "x" * 1000
    node = canonical(big, cap=100)
    assert isinstance(node, Digest) and node.length == 1000
    assert diff(big, big, cap=100).identical
    result = diff(big, big[:-1] + "y", cap=100)
    assert result.count == 1 and result.first.left.bytes_hex.startswith("sha256:")
    assert "…" in result.first.left.value


def test_first_divergence_follows_walk_order_not_key_insertion():
    result = diff({"z": 1, "sample": [1, 2, 3, 4]}, {"z": 2, "sample": [1, 2, 9, 9]})
    assert [d.path for d in result.divergences] == ["sample[2]", "sample[3]", "z"]


def test_timestamp_projection_requires_finite_numbers():
    projections = [Projection("records[*].timestamp", "timestamp")]
    assert diff({"records": [{"timestamp": 1.5}]}, {"records": [{"timestamp": 99.0}]}, projections).identical
    broken = diff({"records": [{"timestamp": 1.5}]}, {"records": [{"timestamp": float("inf")}]}, projections)
    assert broken.first.path == "records[0].timestamp" and "finite" in broken.first.reason


def test_identity_projection_keeps_references_consistent():
    projections = [Projection("**.id", "identity", "call"), Projection("**.tool_call_id", "identity", "call")]
    left = {"turns": [{"id": "A"}, {"tool_call_id": "A"}]}
    same_shape = {"turns": [{"id": "Z"}, {"tool_call_id": "Z"}]}
    cites_other = {"turns": [{"id": "Z"}, {"tool_call_id": "Q"}]}
    assert diff(left, same_shape, projections).identical
    assert diff(left, cites_other, projections).first.path == "turns[1].tool_call_id"


def test_drop_projection_removes_the_key():
    projections = [Projection("meta.deployment", "drop")]
    assert diff({"meta": {"deployment": "a", "x": 1}}, {"meta": {"deployment": "b", "x": 1}}, projections).identical


def test_paths_quote_keys_that_are_not_identifiers():
    assert format_path(("sample", 3, "rollout log probs", 117)) == 'sample[3]["rollout log probs"][117]'


@pytest.mark.parametrize(
    "value",
    [
        {"f": -0.0, "n": float("nan"), "i": 2**70, "s": "\udc80x", "b": b"\xff", "t": True, "z": None},
        [np.arange(5, dtype=np.float16), np.float32(3.5), np.zeros((0, 2), dtype=np.uint8)],
        "y" * 5000,
    ],
)
def test_encoding_round_trips_bit_for_bit(value):
    node = canonical(value, cap=1000)
    text = json.dumps(encode(node))
    assert decode(json.loads(text)) == node


def test_a_leading_key_is_named_first_even_when_its_consequences_fill_the_kept_divergences():
    """A server built with another action horizon: every action batch differs in shape, and the declared horizon
    in the metadata is the cause, though "actions" sorts before "metadata" by name."""
    left = {"actions": [np.zeros((4, 2)) for _ in range(300)], "metadata": {"action_horizon": 4}}
    right = {"actions": [np.zeros((8, 2)) for _ in range(300)], "metadata": {"action_horizon": 8}}
    plain = compare(canonical(left, 1 << 20), canonical(right, 1 << 20))
    assert plain.first.path.startswith("actions")
    assert not any(d.path.startswith("metadata") for d in plain.divergences)  # cut off by the kept cap
    led = compare(canonical(left, 1 << 20), canonical(right, 1 << 20), leading=("metadata",))
    assert led.first.path == "metadata.action_horizon"
    assert led.count == plain.count == 301
