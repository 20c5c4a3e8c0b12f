"""Broken PlugRL env clients, probe level (SPEC 8.1): each misapplies chunks, rewards or episodes."""

from __future__ import annotations

from typing import Any

import numpy as np

from checks.plugrl_client.probe import episode_length
from checks.plugrl_client.reference import ReferenceClient


class HardcodedFloat32(ReferenceClient):
    """Reads the action bytes as float32 whatever the typestr says."""

    def read_action(self, message: dict[str, Any], envs: list[int]) -> tuple[list[int], np.ndarray]:
        order, action = super().read_action(message, envs)
        misread = np.frombuffer(action.tobytes(), dtype=np.float32)[: action.size].reshape(action.shape)
        return order, misread


class EnvMajor(ReferenceClient):
    """Reads the chunk as [n, H, d]: a reshape where a transpose was due."""

    def read_action(self, message: dict[str, Any], envs: list[int]) -> tuple[list[int], np.ndarray]:
        order, action = super().read_action(message, envs)
        horizon, n = action.shape[:2]
        return order, action.reshape(n, horizon, -1).transpose(1, 0, 2)


class LastStepReward(ReferenceClient):
    """Reports the chunk's last reward instead of its sum."""

    def chunk_reward(self, rewards: list[float]) -> float:
        return rewards[-1]


class ResetInStep(ReferenceClient):
    """Resets inside step(), so the done step reports the next episode's observation."""

    def after_terminal_step(self, env: int) -> None:
        self.envs.reset(env)


class StepsPastTerminal(ReferenceClient):
    """Runs the whole chunk even after the episode ended."""

    def stop_at_terminal(self) -> bool:
        return False


class StaleObservation(ReferenceClient):
    """Steps each env once more between its feedback and its next infer."""

    def infer_message(self, envs: list[int]) -> dict[str, Any]:
        for env in envs:
            if 0 < self.envs.t[env] < episode_length(env) - 1:
                self.envs.t[env] += 1
        return super().infer_message(envs)


class ReusesUnoffered(ReferenceClient):
    """Sends reuse whatever the metadata lists."""

    def reuse_row(self, env: int) -> bool:
        return self.fed_back.get(env) is False


class ReusesTerminal(ReferenceClient):
    """Reuses every fed-back env's observation, terminal ones included."""

    def reuse_row(self, env: int) -> bool:
        return bool(self.features) and env in self.fed_back
