"""The rules of the messages a PlugRL client sends, written once for both sides.

The reference server closes with 1001 `plugrl-server-resync` (SPEC 7.2) on any
message that breaks them; the plugrl-client suite judges a client's messages by
the same rules, each rule under a clause of its own. `read_infer` never raises:
it says what an infer holds and, when it breaks a rule, which one and why, so it
judges a recorded message as well as a live one. `check_feedback` raises `Malformed`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from checks.errors import Malformed

OBSERVATION_KEYS = {"images", "states", "text"}
FEEDBACK_KEYS = {"obs", "rewards", "terminated", "truncated", "info"}

# The rules of an infer, in the order they are checked: its envelope (keys, env_indices,
# step_ids), a reuse only when the server offers it, a reuse only of observations the server
# holds, and the observation's own form.
InferRule = Literal["infer-form", "reuse-offered", "reuse-held", "observation-form"]


@dataclass(frozen=True)
class InferReading:
    """What an infer says: its envs, which of them reuse their last fed-back observation, and
    the rows its observation holds (None when it holds no array). `kept` lists the rules checked
    and kept, in order; `broken` the rule it breaks (None when it breaks none) and `why`."""

    envs: list[int] = field(default_factory=list)
    reuse: list[bool] = field(default_factory=list)
    rows: int | None = None
    kept: tuple[InferRule, ...] = ()
    broken: InferRule | None = None
    why: str = ""
    reuse_sent: bool = False  # whether the infer carried a reuse key at all

    @property
    def sent_envs(self) -> list[int]:
        """The envs whose observation rows the infer sends."""
        return [env for env, reused in zip(self.envs, self.reuse, strict=False) if not reused]


@dataclass
class ReuseCache:
    """Per connection: for each env fed back, whether its last feedback ended its episode,
    and the policy features of the observation it reported.

    The reference policy reads one number per observation row, so that is all
    a reuse needs restored.
    """

    ended: dict[int, bool] = field(default_factory=dict)
    features: dict[int, float] = field(default_factory=dict)

    def remember(self, envs: list[int], terminated: np.ndarray, truncated: np.ndarray, features: np.ndarray) -> None:
        for env, ended, feature in zip(envs, (terminated | truncated).tolist(), features.tolist(), strict=True):
            self.ended[env] = bool(ended)
            self.features[env] = float(feature)

    def complete(self, envs: list[int], reuse: list[bool], sent: np.ndarray) -> np.ndarray:
        """Features for every env of an infer: the sent rows, and the remembered ones where reused."""
        if not any(reuse):
            return sent
        rows = iter(sent.tolist())
        return np.asarray(
            [self.features[env] if reused else next(rows) for env, reused in zip(envs, reuse, strict=True)]
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
        raise Malformed("a message must be a map")
    kind = message.get("message_type")
    if kind != expected:
        raise Malformed(f"expected a {expected} message, got message_type {str(kind)[:40]!r}")
    return message


def index_array(message: dict[str, Any], key: str) -> list[int]:
    value = message.get(key)
    if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu"):
        raise Malformed(f"{key} must be a one-dimensional integer ndarray")
    return [int(v) for v in value.tolist()]


def observation_rows(obs: Any) -> int | None:
    """The shared leading dimension of an observation's arrays (None when it has none)."""
    if not isinstance(obs, dict) or set(obs) != OBSERVATION_KEYS:
        raise Malformed("an observation must be a map of exactly images, states and text")
    leading: set[int] = set()
    for group in ("images", "states"):
        arrays = obs[group]
        if not isinstance(arrays, dict) or not all(isinstance(a, np.ndarray) and a.ndim >= 1 for a in arrays.values()):
            raise Malformed(f"{group} must be a map of named arrays")
        leading.update(a.shape[0] for a in arrays.values())
    text = obs["text"]
    if isinstance(text, np.ndarray) and text.ndim >= 1:
        leading.add(text.shape[0])
    elif isinstance(text, list):
        leading.add(len(text))
    if len(leading) > 1:
        raise Malformed(f"observation arrays disagree on their leading dimension: {sorted(leading)[:4]}")
    return leading.pop() if leading else None


def observation_problem(obs: Any, rows: int, where: str) -> str | None:
    """What is wrong with an observation that must hold `rows` rows (None when nothing is)."""
    try:
        found = observation_rows(obs)
    except Malformed as exc:
        return exc.reason
    if found is not None and found != rows:
        return f"the {where} observation has {found} rows for {rows} envs"
    for name, image in obs["images"].items():
        if image.dtype != np.uint8 or image.ndim != 4:
            return f"image {name!r} is {image.dtype.str} {list(image.shape)}, not uint8 [n,h,w,c]"
    return None


def _infer_envs(message: dict[str, Any]) -> list[int]:
    """The env indices of an infer whose envelope is well formed; raises Malformed."""
    for key in ("data", "env_indices", "step_ids"):
        if key not in message:
            raise Malformed(f"the infer has no {key}")
    envs = index_array(message, "env_indices")
    if not envs:
        raise Malformed("the infer names no env")
    if len(set(envs)) != len(envs):
        raise Malformed(f"env_indices repeats an env: {envs[:8]}")
    step_ids = message["step_ids"]
    if not (isinstance(step_ids, np.ndarray) and step_ids.shape == (len(envs),)):
        raise Malformed(f"step_ids is not an array of {len(envs)} entries")
    return envs


def _reuse_problem(mask: Any, envs: list[int], held: Mapping[int, bool]) -> str | None:
    """Why a reuse mask does not reuse held observations only (None when it does)."""
    if not (isinstance(mask, np.ndarray) and mask.dtype == np.bool_ and mask.shape == (len(envs),)):
        return f"reuse is not a |b1 array of shape [{len(envs)}]"
    for env, reused in zip(envs, mask.tolist(), strict=True):
        if reused and env not in held:
            return f"env {env} reuses an observation never fed back on this connection"
        if reused and held[env]:
            return f"env {env} reuses the terminal observation of an ended episode"
    return None


def read_infer(message: dict[str, Any], *, reuse_offered: bool, held: Mapping[int, bool]) -> InferReading:
    """Read an infer map (its message_type already checked) against every infer rule.

    `held`: for each env fed back on this connection, whether that feedback ended its episode.
    """
    try:
        envs = _infer_envs(message)
    except Malformed as exc:
        return InferReading(broken="infer-form", why=exc.reason)
    kept: list[InferRule] = ["infer-form"]
    reuse = [False] * len(envs)
    reuse_sent = "reuse" in message
    if reuse_sent:
        if not reuse_offered:
            why = "reuse sent, but the server does not list reuse-feedback-obs"
            return InferReading(envs, reuse, None, tuple(kept), "reuse-offered", why, reuse_sent)
        kept.append("reuse-offered")
        problem = _reuse_problem(message["reuse"], envs, held)
        if problem is not None:
            return InferReading(envs, reuse, None, tuple(kept), "reuse-held", problem, reuse_sent)
        kept.append("reuse-held")
        reuse = [bool(flag) for flag in message["reuse"].tolist()]
    sent = len(envs) - sum(reuse)
    problem = observation_problem(message["data"], sent, "infer")
    if problem is not None:
        return InferReading(envs, reuse, None, tuple(kept), "observation-form", problem, reuse_sent)
    kept.append("observation-form")
    return InferReading(envs, reuse, observation_rows(message["data"]), tuple(kept), None, "", reuse_sent)


def check_infer(message: Any, reuse_offered: bool, cache: ReuseCache) -> tuple[list[int], np.ndarray]:
    """The env indices of a valid infer, and the policy features of each env's observation; raises Malformed."""
    reading = read_infer(require_type(message, "infer"), reuse_offered=reuse_offered, held=cache.ended)
    if reading.broken is not None:
        raise Malformed(reading.why)
    # An observation with no arrays at all still stands for one row per sent env.
    sent_rows = reading.rows if reading.rows is not None else len(reading.sent_envs)
    features = row_features(message["data"], sent_rows)
    return reading.envs, cache.complete(reading.envs, reading.reuse, features)


def check_feedback(message: Any) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The env indices, terminated and truncated flags and observation features of a valid feedback."""
    require_type(message, "feedback")
    for key in ("data", "env_indices", "step_ids"):
        if key not in message:
            raise Malformed(f"a feedback needs {key}")
    envs = index_array(message, "env_indices")
    m = len(envs)
    data = message["data"]
    if not isinstance(data, dict) or set(data) != FEEDBACK_KEYS:
        raise Malformed("feedback data must have exactly obs, rewards, terminated, truncated and info")
    for key in ("rewards", "terminated", "truncated"):
        if not (isinstance(data[key], np.ndarray) and data[key].shape == (m,)):
            raise Malformed(f"{key} must be an ndarray of shape [{m}]")
    if data["rewards"].dtype.kind != "f":
        raise Malformed("rewards must be floats")
    rows = observation_rows(data["obs"])
    if rows is not None and rows != m:
        raise Malformed(f"obs has {rows} rows for {m} envs")
    check_info_splits(data["info"], m)
    features = row_features(data["obs"], m)
    return envs, data["terminated"].astype(bool), data["truncated"].astype(bool), features


def check_info_splits(info: Any, m: int) -> None:
    """A non-empty info must split into m entries by its first ndarray, top level or one level in."""
    if not isinstance(info, dict):
        raise Malformed("info must be a map")
    if not info:
        return
    for value in info.values():
        candidates = value.values() if isinstance(value, dict) else (value,)
        for candidate in candidates:
            if isinstance(candidate, np.ndarray):
                if candidate.ndim == 0 or candidate.shape[0] != m:
                    raise Malformed(f"info arrays must have {m} rows")
                return
    if m != 1:
        raise Malformed(f"info holds no per-env array, so it cannot be split into {m} entries")
