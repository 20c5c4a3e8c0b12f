"""Durations, for phases that measure how long a target takes: percentiles and a readable form."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (`fraction` in 0..1), or NaN for no values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)] if ordered else math.nan


def seconds(value: float) -> str:
    """A duration for people: 0.8 ms, 12 ms, 1.4 s."""
    if math.isnan(value):
        return "n/a"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
