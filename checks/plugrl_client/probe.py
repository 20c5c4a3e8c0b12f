"""The probe environment of SPEC 8.1, seen from the server: what each env's observation must say.

Env i's episodes last L_i = 3 + 2 (i mod 3) steps; its observation is states
t (steps taken, [n, 1]) and a (the last applied action, [n, d]); each step pays
reward 1. Action element [k, row, d] for env j is 10000 k + 10 j + d, so the
`a` a feedback reports names the step, env and dim the client applied.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def episode_length(env: int) -> int:
    return 3 + 2 * (env % 3)


def probe_chunk(envs: list[int], horizon: int, action_dim: int, dtype: str) -> np.ndarray:
    """The [H, n, d] action whose every element encodes its own position."""
    steps = np.arange(horizon, dtype=np.float64)[:, None, None] * 10000
    rows = np.asarray(envs, dtype=np.float64)[None, :, None] * 10
    dims = np.arange(action_dim, dtype=np.float64)[None, None, :]
    chunk: np.ndarray = (steps + rows + dims).astype(dtype)
    return chunk


def describe_applied(values: np.ndarray) -> str:
    """What an applied action row says it was: a step, env and dim of a chunk, or nothing sent."""
    first = float(values.reshape(-1)[0]) if values.size else float("nan")
    if not np.isfinite(first) or first < 0 or abs(first - round(first)) > 1e-6 or first >= 10000 * 1000:
        return f"{first!r}: not a value the server sent - check the dtype"
    code = round(first)
    step, rest = divmod(code, 10000)
    env, dim = divmod(rest, 10)
    return f"{first:g}: step {step}, env {env}, dim {dim}"


def probe_states(obs: dict[str, Any], rows: int, action_dim: int) -> tuple[np.ndarray, np.ndarray] | str:
    """The t [rows] and a [rows, d] of a probe observation, or what is wrong with them."""
    states = obs.get("states") if isinstance(obs, dict) else None
    if not isinstance(states, dict) or "t" not in states or "a" not in states:
        return "states has no t and a"
    t, a = states["t"], states["a"]
    if not (isinstance(t, np.ndarray) and t.dtype == np.float64 and t.shape == (rows, 1)):
        return f"t is {_shape_of(t)}, not float64 [{rows}, 1]"
    if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 2 and a.shape[0] == rows):
        return f"a is {_shape_of(a)}, not float64 [{rows}, d]"
    if a.shape[1] not in (1, action_dim):
        return f"a is {a.shape[1]} wide; the actions are {action_dim} wide"
    return t[:, 0], a


def _shape_of(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype.str} {list(value.shape)}"
    return type(value).__name__
