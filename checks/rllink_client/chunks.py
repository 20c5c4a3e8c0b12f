"""Reading the episode chunks of an EPISODES message into one form, for either dialect.

A chunk that lacks what RLlib's server reads, or whose lengths disagree,
raises ChunkProblem naming the clause it breaks: RLlib's listener thread dies
on such an episode, so nothing after it is judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from checks.errors import Malformed
from checks.rllink.codec import Dialect

JSON_KEYS = ("obs", "actions", "rewards", "action_dist_inputs", "action_logp", "is_terminated", "is_truncated")
# What SingleAgentEpisode.from_state reads (fact sheet 1.4).
STATE_KEYS = (
    "id_", "agent_id", "module_id", "multi_agent_episode_id", "observations", "actions", "rewards", "infos",
    "extra_model_outputs", "is_terminated", "is_truncated", "t_started", "t", "_observation_space",
    "_action_space", "_start_time", "_last_step_time",
)  # fmt: skip
BUFFERS = ("observations", "actions", "rewards", "infos")
MODEL_OUTPUTS = ("action_dist_inputs", "action_logp")


class ChunkProblem(Malformed):
    """An episode RLlib's server cannot read; `clause_id` names the clause it breaks, `reason` how."""

    def __init__(self, clause_id: str, why: str) -> None:
        super().__init__(why)
        self.clause_id = clause_id


@dataclass
class Chunk:
    obs: list[Any]
    actions: list[Any]
    rewards: list[Any]
    dist: list[Any]
    logp: list[Any]
    terminated: bool
    truncated: bool
    id_: str | None = None
    t_started: Any = None
    t: Any = None

    @property
    def steps(self) -> int:
        return len(self.actions)


def _missing(holder: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    absent = [key for key in keys if key not in holder]
    if absent:
        raise ChunkProblem("rllink-client.episode.fields", f"{where} lacks {', '.join(absent)}")


def _buffer(holder: dict[str, Any], key: str) -> list[Any]:
    """A buffer's items without its lookback (the items before the chunk, which RLlib does not count)."""
    buffer = holder.get(key)
    if not isinstance(buffer, dict) or "data" not in buffer:
        raise ChunkProblem("rllink-client.episode.fields", f"{key} is not a buffer map with data")
    data, lookback = buffer["data"], buffer.get("lookback", 0)
    items = list(data) if isinstance(data, list | np.ndarray) else None
    if items is None:
        raise ChunkProblem("rllink-client.episode.fields", f"{key}.data is {type(data).__name__}, not a list")
    if not isinstance(lookback, int) or isinstance(lookback, bool) or not 0 <= lookback <= len(items):
        raise ChunkProblem("rllink-client.episode.fields", f"{key}.lookback is {lookback!r}")
    return items[lookback:]


def read_chunk(episode: Any, dialect: Dialect) -> Chunk:
    if not isinstance(episode, dict):
        raise ChunkProblem("rllink-client.episode.fields", f"an episode is a {type(episode).__name__}, not a map")
    if dialect == "json":
        _missing(episode, JSON_KEYS, "an episode")
        obs, actions, rewards, dist, logp = (episode[key] for key in JSON_KEYS[:5])
        if not all(isinstance(value, list) for value in (obs, actions, rewards, dist, logp)):
            raise ChunkProblem("rllink-client.episode.fields", "obs/actions/rewards/model outputs are not all lists")
        chunk = Chunk(obs, actions, rewards, dist, logp, episode["is_terminated"], episode["is_truncated"])
        infos = None
    else:
        _missing(episode, STATE_KEYS, "an episode")
        outputs = episode["extra_model_outputs"]
        if not isinstance(outputs, dict):
            raise ChunkProblem("rllink-client.episode.fields", "extra_model_outputs is not a map")
        _missing(outputs, MODEL_OUTPUTS, "extra_model_outputs")
        obs, actions, rewards, infos = (_buffer(episode, key) for key in BUFFERS)
        chunk = Chunk(
            obs,
            actions,
            rewards,
            _buffer(outputs, "action_dist_inputs"),
            _buffer(outputs, "action_logp"),
            terminated=episode["is_terminated"],
            truncated=episode["is_truncated"],
            id_=episode["id_"],
            t_started=episode["t_started"],
            t=episode["t"],
        )
    steps = chunk.steps
    lengths = {"obs": len(chunk.obs), "rewards": len(chunk.rewards), "dist inputs": len(chunk.dist)}
    lengths["logp"] = len(chunk.logp)
    if infos is not None:
        lengths["infos"] = len(infos)
    want = {"obs": steps + 1, "rewards": steps, "dist inputs": steps, "logp": steps, "infos": steps + 1}
    wrong = [f"{len(chunk.obs) if k == 'obs' else n} {k}" for k, n in lengths.items() if n != want[k]]
    if wrong:
        raise ChunkProblem(
            "rllink-client.episode.shape", f"{steps} actions but {', '.join(wrong)} (want obs and infos = actions + 1)"
        )
    if not isinstance(chunk.terminated, bool) or not isinstance(chunk.truncated, bool):
        raise ChunkProblem(
            "rllink-client.episode.shape",
            f"is_terminated {chunk.terminated!r} / is_truncated {chunk.truncated!r} are not both bools",
        )
    if chunk.terminated and chunk.truncated:
        raise ChunkProblem("rllink-client.episode.shape", "is_terminated and is_truncated are both true")
    return chunk
