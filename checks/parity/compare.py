"""The one comparator: two canonical trees, walked in the same order, every difference named by its path.

The walk order is fixed (map keys sorted, sequences by index, array elements in
C order), so "the first divergence" is the same on every run. Each divergence
keeps both sides as text and as bytes. Arrays of one dtype and shape are
compared element by element, each element by its bytes, so a float's last bit,
a -0.0 or a NaN payload is found at its index.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.parity.projections import Problem, Projection, Projector, Segment, project
from checks.parity.values import Atom, Digest, Leaf, Map, Node, Seq, digest_of, float_bytes, hex_bytes, shown

# Divergences kept whole for the report; the rest are only counted.
KEPT_DIVERGENCES = 200
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def format_path(path: tuple[Segment, ...]) -> str:
    out = []
    for segment in path:
        if isinstance(segment, int):
            out.append(f"[{segment}]")
        elif isinstance(segment, str) and segment.startswith("[") and segment.endswith("]"):
            out.append(segment)  # an element index such as [2,5]
        elif IDENTIFIER.match(segment):
            out.append(f".{segment}" if out else segment)
        else:
            out.append(f"[{json.dumps(segment)}]")
    return "".join(out) or "(root)"


@dataclass(frozen=True)
class Side:
    value: str  # for people
    bytes_hex: str  # what was compared

    def to_dict(self) -> dict[str, str]:
        return {"value": self.value, "bytes": self.bytes_hex}


ABSENT = Side("(absent)", "")


@dataclass(frozen=True)
class Divergence:
    path: str
    reason: str
    left: Side
    right: Side
    segments: tuple[Segment, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "reason": self.reason,
            "left": self.left.to_dict(),
            "right": self.right.to_dict(),
            "segments": list(self.segments),
        }


@dataclass
class Comparison:
    """Every divergence counted; the first KEPT_DIVERGENCES kept in walk order."""

    count: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    # Top-level sequence indices with any divergence, per top-level key (for divergence rates).
    units: dict[str, set[int]] = field(default_factory=dict)
    # Top-level keys walked and listed first, in this order: where a divergence is a cause (a declared
    # action horizon) whose consequences (every action of another shape) sort before it by name.
    leading: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return self.count == 0

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    def add(self, path: tuple[Segment, ...], reason: str, left: Side, right: Side, count: int = 1) -> None:
        self.count += count
        if len(path) >= 2 and isinstance(path[0], str) and isinstance(path[1], int):
            self.units.setdefault(path[0], set()).add(path[1])
        if len(self.divergences) < KEPT_DIVERGENCES:
            self.divergences.append(Divergence(format_path(path), reason, left, right, path))


def side_of(leaf: Leaf | None) -> Side:
    if leaf is None:
        return ABSENT
    if isinstance(leaf, Digest):
        return Side(shown(leaf), f"sha256:{leaf.sha256} ({leaf.length} bytes)")
    return Side(shown(leaf), hex_bytes(leaf.data))


def kind_name(node: Node) -> str:
    if isinstance(node, Seq):
        return "list"
    if isinstance(node, Map):
        return "map"
    if isinstance(node, Digest):
        return node.kind
    return node.kind


def compare(
    left: Node,
    right: Node,
    projections: tuple[Projection, ...] = (),
    *,
    into: Comparison | None = None,
    leading: tuple[str, ...] = (),
) -> Comparison:
    """Project both trees, then walk them together (the `leading` top-level keys first)."""
    result = into if into is not None else Comparison(leading=leading)
    left, left_problems = project(left, projections)
    right, right_problems = project(right, projections)
    for problem, on_left in [(p, True) for p in left_problems] + [(p, False) for p in right_problems]:
        _add_problem(result, problem, on_left)
    _walk(result, left, right, (), Projector(projections))
    result.divergences.sort(key=lambda d: _order_key(d.segments, result.leading))
    return result


def _order_key(path: tuple[Segment, ...], leading: tuple[str, ...] = ()) -> tuple[tuple[int, int | str], ...]:
    rank = leading.index(path[0]) if path and path[0] in leading else len(leading)
    return ((-1, rank), *((0, s) if isinstance(s, int) else (1, s) for s in path))


def _add_problem(result: Comparison, problem: Problem, on_left: bool) -> None:
    side = Side(problem.reason, "")
    result.add(problem.path, problem.reason, side if on_left else ABSENT, ABSENT if on_left else side)


def _walk(result: Comparison, left: Node, right: Node, path: tuple[Segment, ...], rules: Projector) -> None:
    if isinstance(left, Map) and isinstance(right, Map):
        _walk_maps(result, left, right, path, rules)
    elif isinstance(left, Seq) and isinstance(right, Seq):
        for index, (a, b) in enumerate(zip(left.items, right.items, strict=False)):
            _walk(result, a, b, (*path, index), rules)
        if len(left.items) != len(right.items):
            shorter = min(len(left.items), len(right.items))
            result.add(
                (*path, shorter),
                f"{len(left.items)} items on the left, {len(right.items)} on the right",
                Side(f"{len(left.items)} items", ""),
                Side(f"{len(right.items)} items", ""),
            )
    elif isinstance(left, (Atom, Digest)) and isinstance(right, (Atom, Digest)):
        _compare_leaves(result, left, right, path)
    else:
        result.add(
            path,
            f"a {kind_name(left)} on the left, a {kind_name(right)} on the right",
            Side(f"a {kind_name(left)}", ""),
            Side(f"a {kind_name(right)}", ""),
        )


def _walk_maps(result: Comparison, left: Map, right: Map, path: tuple[Segment, ...], rules: Projector) -> None:
    right_items = dict(right.items)
    left_items = dict(left.items)
    keys = sorted(set(left_items) | set(right_items))
    if not path:  # the leading keys first, so their divergences are kept when the rest are only counted
        keys.sort(key=lambda key: _order_key((key,), result.leading))
    for key in keys:
        one_sided = key not in right_items or key not in left_items
        if one_sided and rules.optional((*path, key)):
            continue
        if key not in right_items:
            result.add((*path, key), "only on the left", side_of(_leaf(left_items[key])), ABSENT)
        elif key not in left_items:
            result.add((*path, key), "only on the right", ABSENT, side_of(_leaf(right_items[key])))
        else:
            _walk(result, left_items[key], right_items[key], (*path, key), rules)


def _leaf(node: Node) -> Leaf:
    if isinstance(node, (Atom, Digest)):
        return node
    return Atom("projected", f"a {kind_name(node)}".encode())


def _compare_leaves(result: Comparison, left: Leaf, right: Leaf, path: tuple[Segment, ...]) -> None:
    if isinstance(left, Atom) and isinstance(right, Atom):
        if left == right:
            return
        if left.kind == right.kind == "ndarray" and left.dtype == right.dtype and left.shape == right.shape:
            _compare_arrays(result, left, right, path)
            return
        result.add(path, _leaf_reason(left, right), side_of(left), side_of(right))
        return
    # At least one side was over the evidence cap: compare lengths and SHA-256 of the full bytes.
    a = left if isinstance(left, Digest) else digest_of(left)
    b = right if isinstance(right, Digest) else digest_of(right)
    if (a.kind, a.dtype, a.shape, a.length, a.sha256) != (b.kind, b.dtype, b.shape, b.length, b.sha256):
        result.add(path, _leaf_reason(a, b), side_of(a), side_of(b))


def _leaf_reason(left: Leaf, right: Leaf) -> str:
    if left.kind != right.kind:
        return f"a {left.kind} on the left, a {right.kind} on the right"
    if left.dtype != right.dtype:
        return f"dtype {left.dtype} on the left, {right.dtype} on the right"
    if left.shape != right.shape:
        return f"shape {list(left.shape)} on the left, {list(right.shape)} on the right"
    if isinstance(left, Digest) and isinstance(right, Digest):
        return (
            f"{left.length} vs {right.length} bytes, SHA-256 differs"
            if left.length != right.length
            else ("same length, SHA-256 differs")
        )
    return "the bytes differ"


def _compare_arrays(result: Comparison, left: Atom, right: Atom, path: tuple[Segment, ...]) -> None:
    try:
        dtype = np.dtype(left.dtype)
    except TypeError:
        dtype = np.dtype(np.uint8)
    width = max(dtype.itemsize, 1)
    if len(left.data) != len(right.data) or len(left.data) % width:
        result.add(path, "the bytes differ", side_of(left), side_of(right))
        return
    a = np.frombuffer(left.data, dtype=np.uint8).reshape(-1, width)
    b = np.frombuffer(right.data, dtype=np.uint8).reshape(-1, width)
    differing = np.flatnonzero((a != b).any(axis=1))
    first = int(differing[0])
    index = np.unravel_index(first, left.shape) if left.shape else ()
    element: tuple[Segment, ...] = (
        (int(index[0]),) if len(index) == 1 else ((f"[{','.join(str(int(i)) for i in index)}]",) if index else ())
    )
    result.add(
        (*path, *element),
        f"element {first} of {a.shape[0]} differs ({_count(len(differing), 'element differs', 'elements differ')}, "
        f"dtype {left.dtype})",
        _element_side(a[first], dtype),
        _element_side(b[first], dtype),
        count=len(differing),
    )


def _element_side(raw: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> Side:
    data = raw.tobytes()
    try:
        value = np.frombuffer(data, dtype=dtype)[0]
    except (TypeError, ValueError):
        return Side(f"<{len(data)} bytes>", data.hex())
    if dtype.kind != "f":
        return Side(repr(value.item()), data.hex())
    # The float as float64 bytes too, like a plain float, so both kinds read the same way.
    return Side(f"{float(value)!r} (float64 {float_bytes(float(value)).hex()})", data.hex())


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"
