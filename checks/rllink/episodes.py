"""Valid (and deliberately invalid) episode chunks built from the configured spaces, in both dialects."""

from __future__ import annotations

import math
import uuid
from typing import Any

import numpy as np

from checks.rllink.codec import Dialect
from checks.rllink.options import RLlinkOptions

CHUNK = 50  # steps per chunk: a batch spans several chunks, the last one cut, not ended


def _chunk(options: RLlinkOptions, rng: np.random.Generator, steps: int, ended: bool) -> dict[str, list[Any]]:
    shape = [steps + 1, *options.obs_shape]
    obs = rng.uniform(options.obs_low, options.obs_high, shape).astype(options.obs_dtype).tolist()
    if options.action_space == "discrete":
        actions: list[Any] = rng.integers(0, options.action_n, steps).tolist()
        logp = [-math.log(options.action_n)] * steps
    else:
        drawn = rng.uniform(options.action_low, options.action_high, (steps, options.action_dim))
        actions = drawn.astype("float32").tolist()
        # A unit Gaussian's log-density, matching dist inputs of zero mean and zero log-std.
        logp = (-0.5 * (drawn**2).sum(axis=1) - 0.5 * options.action_dim * math.log(2 * math.pi)).tolist()
    return {
        "obs": obs,
        "actions": actions,
        "action_dist_inputs": [[0.0] * options.logits for _ in range(steps)],
        "action_logp": logp,
        "rewards": [1.0] * steps,
        "ended": [ended],
    }


def _buffer(data: list[Any]) -> dict[str, Any]:
    return {"data": data, "lookback": 0, "finalized": False, "space": None}


def _as_dialect(chunk: dict[str, list[Any]], dialect: Dialect, episode_id: str, t_started: int) -> dict[str, Any]:
    ended = bool(chunk["ended"][0])
    if dialect == "json":
        return {
            "obs": chunk["obs"],
            "actions": chunk["actions"],
            "action_dist_inputs": chunk["action_dist_inputs"],
            "action_logp": chunk["action_logp"],
            "rewards": chunk["rewards"],
            "is_terminated": ended,
            "is_truncated": False,
        }
    steps = len(chunk["actions"])
    return {
        "id_": episode_id,
        "agent_id": None,
        "module_id": None,
        "multi_agent_episode_id": None,
        "observations": _buffer(chunk["obs"]),
        "actions": _buffer(chunk["actions"]),
        "rewards": _buffer(chunk["rewards"]),
        "infos": _buffer([{} for _ in range(steps + 1)]),
        "extra_model_outputs": {
            "action_dist_inputs": _buffer(chunk["action_dist_inputs"]),
            "action_logp": _buffer(chunk["action_logp"]),
        },
        "is_terminated": ended,
        "is_truncated": False,
        "t_started": t_started,
        "t": t_started + steps,
        "_observation_space": None,
        "_action_space": None,
        "_start_time": None,
        "_last_step_time": None,
    }


def batch(options: RLlinkOptions, dialect: Dialect, steps: int, seed: int = 0) -> list[dict[str, Any]]:
    """Chunks holding `steps` env steps in all: whole episodes of CHUNK steps, then one cut chunk."""
    rng = np.random.default_rng(seed)
    out = []
    left = steps
    while left > 0:
        size = min(CHUNK, left)
        left -= size
        out.append(_as_dialect(_chunk(options, rng, size, ended=left > 0), dialect, uuid.uuid4().hex, 0))
    return out


def broken_episodes(options: RLlinkOptions, dialect: Dialect) -> list[tuple[str, dict[str, Any]]]:
    """Semantically bad EPISODES bodies (destructive: RLlib's listener thread dies on each)."""
    good = batch(options, dialect, 5, seed=7)[0]
    no_reset_obs = dict(good)
    if dialect == "json":
        no_reset_obs["obs"] = good["obs"][1:]
        missing = {k: v for k, v in good.items() if k != "action_logp"}
        missing_name = "an episode without action_logp"
    else:
        no_reset_obs["observations"] = _buffer(good["observations"]["data"][1:])
        missing = {k: v for k, v in good.items() if k != "id_"}
        missing_name = "an episode without id_"
    return [
        ("EPISODES without an `episodes` key", {"type": "EPISODES"}),
        ("an episode with as many observations as actions", {"type": "EPISODES", "episodes": [no_reset_obs]}),
        (missing_name, {"type": "EPISODES", "episodes": [missing]}),
    ]
