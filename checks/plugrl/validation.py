"""What a conforming PlugRL server checks in the messages clients send (used by the reference server).

Every problem raises `ProtocolError`, which the server answers by closing the
connection with 1001 `plugrl-server-resync` (SPEC 7.2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

OBSERVATION_KEYS = {"images", "states", "text"}
FEEDBACK_KEYS = {"obs", "rewards", "terminated", "truncated", "info"}


class ProtocolError(Exception):
    """A client message the protocol does not allow."""


@dataclass
class ReuseCache:
    """Per connection: for each env fed back, whether its last feedback ended its episode,
    and the policy features of the observation it reported.

    The reference policy reads one number per observation row, so that is all
    a reuse needs restored.
    """

    ended: dict[int, bool] = field(default_factory=dict)
    features: dict[int, float] = field(default_factory=dict)

    def check(self, envs: list[int], reuse: Any, rows_sent: int) -> None:
        if not (isinstance(reuse, np.ndarray) and reuse.dtype == np.bool_ and reuse.shape == (len(envs),)):
            raise ProtocolError(f"reuse must be a |b1 ndarray of shape [{len(envs)}]")
        if rows_sent != int(np.count_nonzero(~reuse)):
            raise ProtocolError(f"data has {rows_sent} rows for {int(np.count_nonzero(~reuse))} non-reused envs")
        for env, reused in zip(envs, reuse.tolist(), strict=True):
            if reused and env not in self.ended:
                raise ProtocolError(f"env {env} reuses an observation never fed back on this connection")
            if reused and self.ended[env]:
                raise ProtocolError(f"env {env} reuses the terminal observation of an ended episode")

    def remember(self, envs: list[int], terminated: np.ndarray, truncated: np.ndarray, features: np.ndarray) -> None:
        for env, ended, feature in zip(envs, (terminated | truncated).tolist(), features.tolist(), strict=True):
            self.ended[env] = bool(ended)
            self.features[env] = float(feature)

    def complete(self, envs: list[int], reuse: np.ndarray | None, sent: np.ndarray) -> np.ndarray:
        """Features for every env of an infer: the sent rows, and the remembered ones where reused."""
        if reuse is None:
            return sent
        rows = iter(sent.tolist())
        return np.asarray(
            [self.features[env] if reused else next(rows) for env, reused in zip(envs, reuse.tolist(), strict=True)]
        )


def row_features(obs: dict[str, Any], rows: int) -> np.ndarray:
    """One number per observation row: the mean of its numeric state and image values."""
    total, count = np.zeros(rows), 0
    for group in ("states", "images"):
        for array in obs[group].values():
            if array.dtype.kind in "biuf" and array.shape[0] == rows and array.size:
                total += array.reshape(rows, -1).astype(np.float64).mean(axis=1)
                count += 1
    return total / max(count, 1)


def require_type(message: Any, expected: str) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a map")
    kind = message.get("message_type")
    if kind != expected:
        raise ProtocolError(f"expected a {expected} message, got message_type {str(kind)[:40]!r}")
    return message


def index_array(message: dict[str, Any], key: str) -> list[int]:
    value = message.get(key)
    if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu"):
        raise ProtocolError(f"{key} must be a one-dimensional integer ndarray")
    return [int(v) for v in value.tolist()]


def observation_rows(obs: Any) -> int | None:
    """The shared leading dimension of an observation's arrays (None when it has none)."""
    if not isinstance(obs, dict) or set(obs) != OBSERVATION_KEYS:
        raise ProtocolError("an observation must be a map of exactly images, states and text")
    leading: set[int] = set()
    for group in ("images", "states"):
        arrays = obs[group]
        if not isinstance(arrays, dict) or not all(isinstance(a, np.ndarray) and a.ndim >= 1 for a in arrays.values()):
            raise ProtocolError(f"{group} must be a map of named arrays")
        leading.update(a.shape[0] for a in arrays.values())
    text = obs["text"]
    if isinstance(text, np.ndarray) and text.ndim >= 1:
        leading.add(text.shape[0])
    elif isinstance(text, list):
        leading.add(len(text))
    if len(leading) > 1:
        raise ProtocolError(f"observation arrays disagree on their leading dimension: {sorted(leading)[:4]}")
    return leading.pop() if leading else None


def check_infer(message: Any, reuse_offered: bool, cache: ReuseCache) -> tuple[list[int], np.ndarray]:
    """The env indices of a valid infer, and the policy features of each env's observation."""
    require_type(message, "infer")
    for key in ("data", "env_indices", "step_ids"):
        if key not in message:
            raise ProtocolError(f"an infer needs {key}")
    envs = index_array(message, "env_indices")
    if not envs:
        raise ProtocolError("an infer must name at least one env")
    if len(set(envs)) != len(envs):
        raise ProtocolError("env_indices repeats an env")
    rows = observation_rows(message["data"])
    reuse = message.get("reuse")
    if "reuse" in message:
        if not reuse_offered:
            raise ProtocolError("reuse sent, but the server does not list reuse-feedback-obs")
        cache.check(envs, reuse, len(envs) if rows is None else rows)
    elif rows is not None and rows != len(envs):
        raise ProtocolError(f"the observation has {rows} rows for {len(envs)} envs")
    # An observation with no arrays at all still stands for one row per sent env.
    sent_rows = rows if rows is not None else len(envs) - (0 if reuse is None else int(np.count_nonzero(reuse)))
    return envs, cache.complete(envs, reuse, row_features(message["data"], sent_rows))


def check_feedback(message: Any) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The env indices, terminated and truncated flags and observation features of a valid feedback."""
    require_type(message, "feedback")
    for key in ("data", "env_indices", "step_ids"):
        if key not in message:
            raise ProtocolError(f"a feedback needs {key}")
    envs = index_array(message, "env_indices")
    m = len(envs)
    data = message["data"]
    if not isinstance(data, dict) or set(data) != FEEDBACK_KEYS:
        raise ProtocolError("feedback data must have exactly obs, rewards, terminated, truncated and info")
    for key in ("rewards", "terminated", "truncated"):
        if not (isinstance(data[key], np.ndarray) and data[key].shape == (m,)):
            raise ProtocolError(f"{key} must be an ndarray of shape [{m}]")
    if data["rewards"].dtype.kind != "f":
        raise ProtocolError("rewards must be floats")
    rows = observation_rows(data["obs"])
    if rows is not None and rows != m:
        raise ProtocolError(f"obs has {rows} rows for {m} envs")
    check_info_splits(data["info"], m)
    features = row_features(data["obs"], m)
    return envs, data["terminated"].astype(bool), data["truncated"].astype(bool), features


def check_info_splits(info: Any, m: int) -> None:
    """A non-empty info must split into m entries by its first ndarray, top level or one level in."""
    if not isinstance(info, dict):
        raise ProtocolError("info must be a map")
    if not info:
        return
    for value in info.values():
        candidates = value.values() if isinstance(value, dict) else (value,)
        for candidate in candidates:
            if isinstance(candidate, np.ndarray):
                if candidate.ndim == 0 or candidate.shape[0] != m:
                    raise ProtocolError(f"info arrays must have {m} rows")
                return
    if m != 1:
        raise ProtocolError(f"info holds no per-env array, so it cannot be split into {m} entries")
