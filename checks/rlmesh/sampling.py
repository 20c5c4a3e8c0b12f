"""Actions for a step loop, drawn many steps at a time: the same values `codec.sample` draws one step at a time.

A numpy draw costs a few microseconds however few values it makes, and a
step loop makes one per step. For a space of one numeric leaf the loop's
actions are drawn `batch` steps at once and handed out step by step. numpy's
Generator draws 64-bit integers and doubles in order, one per element, so a
draw for K steps yields exactly the K single draws (tests/checks/rlmesh/
test_sampling.py holds this for every leaf kind): the wire carries the same
actions as before. Text leaves, and spaces of several leaves (drawn leaf by
leaf within a step), are drawn one step at a time.
"""

from __future__ import annotations

import numpy as np

from checks.rlmesh import codec
from checks.rlmesh.proto import spaces_pb2

BATCH_STEPS = 64
BATCH_BYTES = 1 << 20  # a large action space draws fewer steps at once


class ActionSampler:
    """`next()` gives the value `codec.sample(space, rng, lanes)` would give at this point of `rng`'s stream.

    The sampler owns `rng`: nothing else may draw from it, since it is drawn ahead.
    """

    def __init__(self, space: codec.Space, rng: np.random.Generator, lanes: int) -> None:
        self.space, self.rng, self.lanes = space, rng, lanes
        leaves = codec.leaves_of(space)
        self.leaf = leaves[0][1] if len(leaves) == 1 and leaves[0][1].kind != "text" else None
        self.step_bytes = lanes * self.leaf.numel * self.leaf.leaf_dtype.itemsize if self.leaf else 0
        self.batch = max(1, min(BATCH_STEPS, BATCH_BYTES // max(1, self.step_bytes)))
        self.drawn = b""
        self.offset = 0

    def next(self) -> spaces_pb2.SpaceValue:
        if self.leaf is None or self.step_bytes == 0:
            return codec.sample(self.space, self.rng, self.lanes)
        if self.offset >= len(self.drawn):
            self.drawn, self.offset = codec.sample_leaf(self.leaf, self.rng, self.lanes * self.batch), 0
        start, self.offset = self.offset, self.offset + self.step_bytes
        return spaces_pb2.SpaceValue(leaves=[self.drawn[start : self.offset]])
