"""Judging the episodes a client sends: values, log-probabilities, the policy used, chunk continuity."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from checks.core import Report, Transcript
from checks.rllink.codec import Dialect
from checks.rllink_client.chunks import Chunk
from checks.rllink_client.options import RLlinkClientOptions
from checks.rllink_client.policy import Policy, forward, log_softmax

RTOL = 1e-3


def _is_int(value: Any) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _numbers(items: list[Any], width: int | None) -> np.ndarray | str:
    """Items as a float64 array ([n] or [n, width]), or what is wrong with them."""
    try:
        array = np.asarray(items, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return f"not numbers of one shape ({exc})"
    want = (len(items),) if width is None else (len(items), width)
    if array.shape != want:
        return f"shape {list(array.shape)}, not {list(want)}"
    if not np.isfinite(array).all():
        return "not all finite"
    return array


@dataclass
class Judge:
    """One connection's episodes, judged against what this run served."""

    report: Report
    transcript: Transcript
    options: RLlinkClientOptions
    dialect: Dialect
    policy: Policy
    version: int = 0  # weights_seq_no of the last SET_STATE sent on this connection
    steps_since_state: int = 0
    open_chunks: dict[str, tuple[int, np.ndarray]] = field(default_factory=dict)  # id_ -> (t, last obs)
    ended: set[str] = field(default_factory=set)

    def failed(self, clause_id: str, expected: str, actual: str) -> None:
        self.report.failed(clause_id, expected=expected, actual=actual, evidence=self.transcript)

    def chunk(self, chunk: Chunk, where: str) -> None:
        self.steps_since_state += chunk.steps
        obs = self._spaces(chunk, where)
        if obs is None:
            return
        dist = _numbers(chunk.dist, self.options.actions)
        logp = _numbers(chunk.logp, None)
        if isinstance(dist, str) or isinstance(logp, str):
            problem = f"action_dist_inputs {dist}" if isinstance(dist, str) else f"action_logp {logp}"
            self.failed("rllink-client.values.logp", f"[{chunk.steps}, {self.options.actions}] dist inputs", problem)
            return
        self._logp(chunk, dist, logp, where)
        self._onpolicy(obs, dist, where)
        if self.dialect == "msgpack":
            self._continuity(chunk, obs, where)

    def _spaces(self, chunk: Chunk, where: str) -> np.ndarray | None:
        expected = (
            f"obs [{chunk.steps + 1}, {self.options.obs_dim}] finite, integer actions in [0, {self.options.actions}), "
            "finite rewards"
        )
        obs = _numbers(chunk.obs, self.options.obs_dim)
        rewards = _numbers(chunk.rewards, None)
        bad_actions = [a for a in chunk.actions if not _is_int(a) or not 0 <= int(a) < self.options.actions]
        if isinstance(obs, str):
            self.failed("rllink-client.values.spaces", expected, f"{where}: observations {obs}")
            return None
        if bad_actions or isinstance(rewards, str):
            problem = f"actions {bad_actions[:3]!r}" if bad_actions else f"rewards {rewards}"
            self.failed("rllink-client.values.spaces", expected, f"{where}: {problem}")
            return None
        self.report.passed("rllink-client.values.spaces", actual=f"{where}: observations, actions, rewards in range")
        return obs

    def _logp(self, chunk: Chunk, dist: np.ndarray, logp: np.ndarray, where: str) -> None:
        if not chunk.steps:
            return
        actions = np.asarray([int(a) for a in chunk.actions])
        want = log_softmax(dist)[np.arange(chunk.steps), actions]
        error = np.abs(want - logp)
        worst = int(error.argmax())
        self.report.check(
            bool((logp <= 1e-6).all() and error[worst] <= self.options.tolerance),
            "rllink-client.values.logp",
            expected="action_logp = log softmax(action_dist_inputs)[action] <= 0",
            actual=f"{where}, step {worst}: action_logp {logp[worst]:.6g}, log softmax gives {want[worst]:.6g}",
            evidence=self.transcript,
        )

    def _onpolicy(self, obs: np.ndarray, dist: np.ndarray, where: str) -> None:
        if not len(dist):
            return
        layers = self.policy.versions[self.version]
        mine = forward(layers, obs[:-1])
        error = np.abs(mine - dist) - RTOL * np.abs(mine)
        worst = int(error.max(axis=1).argmax())
        if error[worst].max() <= self.options.tolerance:
            self.report.passed(
                "rllink-client.onpolicy.weights",
                actual=f"{where}: dist inputs match the forward pass of weights_seq_no {self.version}",
            )
            return
        used = [
            seq
            for seq, older in self.policy.versions.items()
            if np.allclose(forward(older, obs[:-1]), dist, rtol=RTOL, atol=self.options.tolerance)
        ]
        hint = f"; they match weights_seq_no {used[0]} instead" if used else "; they match no weights this run sent"
        self.failed(
            "rllink-client.onpolicy.weights",
            f"dist inputs of weights_seq_no {self.version}, the last SET_STATE sent",
            f"{where}, step {worst}: {np.round(dist[worst], 5).tolist()} vs {np.round(mine[worst], 5).tolist()}{hint}",
        )

    def _continuity(self, chunk: Chunk, obs: np.ndarray, where: str) -> None:
        expected = "a cut episode continues with its id_, t_started = the previous t and its last observation"
        key = str(chunk.id_)
        if key in self.ended:
            self.failed("rllink-client.chunk.continuity", expected, f"{where}: id_ {key} continues an ended episode")
            return
        previous = self.open_chunks.pop(key, None)
        if previous is None:
            resumed = [k for k, (_, last) in self.open_chunks.items() if np.array_equal(last, obs[0])]
            if resumed or chunk.t_started not in (0, None):
                self.failed(
                    "rllink-client.chunk.continuity",
                    expected,
                    f"{where}: new id_ {key} with t_started {chunk.t_started!r}"
                    + (f", continuing episode {resumed[0]}" if resumed else ""),
                )
                return
        else:
            t_before, last = previous
            if chunk.t_started != t_before or not np.array_equal(last, obs[0]):
                self.failed(
                    "rllink-client.chunk.continuity",
                    expected,
                    f"{where}: id_ {key} t_started {chunk.t_started!r} after t {t_before}, first observation "
                    f"{'the same' if np.array_equal(last, obs[0]) else 'different'}",
                )
                return
        if chunk.terminated or chunk.truncated:
            self.ended.add(key)
        elif _is_int(chunk.t):
            self.open_chunks[key] = (int(chunk.t), obs[-1])
        self.report.passed("rllink-client.chunk.continuity", actual=f"{where}: chunks continue their episodes")
