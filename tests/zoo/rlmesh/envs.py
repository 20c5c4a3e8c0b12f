"""Gymnasium envs served by the real `rlmesh` server: conforming ones and a zoo of broken ones.

Run one as `python -m tests.zoo.rlmesh.envs NAME`: it serves NAME on a free
loopback port, prints the address on its first line and serves until killed.
Each broken env's docstring names the clause the checker must flag.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
from gymnasium import spaces

STEP_DELAY = float(os.environ.get("RLMESH_TEST_STEP_DELAY", "0.12"))


class Counter(gym.Env):
    """A conforming custom env: a seeded start, a 6-step episode, a step that takes STEP_DELAY."""

    metadata = {"render_modes": []}
    observation_space = spaces.Box(-10.0, 10.0, (2,), np.float32)
    action_space = spaces.Discrete(3)
    episode_length = 6

    def __init__(self) -> None:
        self.count = 0
        self.position = 0.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.count = 0
        self.position = float(self.np_random.uniform(-1, 1))
        return self.observation(), {}

    def observation(self):
        return np.array([self.position, self.count], dtype=np.float32)

    def step(self, action):
        time.sleep(STEP_DELAY)
        if self.count >= self.episode_length:  # stepping an ended episode: it stays ended
            return self.observation(), 0.0, True, False, {}
        self.count += 1
        self.position = float(np.clip(self.position + (int(action) - 1) * 0.5, -9, 9))
        return self.observation(), self.reward(), self.count >= self.episode_length, False, self.info()

    def reward(self) -> float:
        return 1.0

    def info(self):
        return {"count": self.count}

    def render(self):
        return None


class Composite(Counter):
    """A conforming env on composite spaces: a Dict observation holding every leaf kind, MultiDiscrete actions."""

    observation_space = spaces.Dict(
        {
            "zpos": spaces.Box(-10.0, 10.0, (2,), np.float32),
            "count": spaces.Discrete(10, start=1),
            "flags": spaces.MultiBinary(3),
            "pair": spaces.Tuple((spaces.Discrete(4), spaces.Box(0, 255, (2, 2), np.uint8))),
            "label": spaces.Text(min_length=1, max_length=6, charset="abc"),
        }
    )
    action_space = spaces.MultiDiscrete([3, 2])

    def observation(self):
        return {
            "zpos": np.array([self.position, self.count], dtype=np.float32),
            "count": self.count + 1,
            "flags": np.array([1, 0, self.count % 2], dtype=np.int8),
            "pair": (self.count % 4, np.full((2, 2), self.count, dtype=np.uint8)),
            "label": "abc"[: 1 + self.count % 3],
        }

    def step(self, action):
        return super().step(int(action[0]))


class OwnThread(Counter):
    """A conforming env that resets and steps on a worker thread of its own, as an env driving a simulator does.

    Served as lanes, the one given `episode_length=1` ends its episode on every first step: when the
    checker's Close follows one step, that lane has no episode left to report (issue 8, item 6).
    """

    def __init__(self, episode_length: int = Counter.episode_length) -> None:
        super().__init__()
        self.episode_length = episode_length
        self.worker = ThreadPoolExecutor(1, thread_name_prefix="env")

    def reset(self, *, seed=None, options=None):
        return self.worker.submit(super().reset, seed=seed, options=options).result()

    def step(self, action):
        return self.worker.submit(super().step, action).result()


class Endless(Counter):
    """A counter whose episodes end only when something outside it says so; its observation stays in its Box."""

    metadata = {"render_modes": [], "max_episode_steps": 8}
    episode_length = 10**9

    def observation(self):
        return np.array([self.position, self.count % 10], dtype=np.float32)


def time_limited() -> gym.Env:
    """A conforming env that declares `max_episode_steps` 8 and is truncated there, as gymnasium's TimeLimit does."""
    return gym.wrappers.TimeLimit(Endless(), max_episode_steps=8)


# ---------------------------------------------------------------- the zoo


class NeverEnds(Endless):
    """rlmesh.s2.step-limit: declares `max_episode_steps` 8 in its metadata, but its episodes never end."""


class ObsOutOfBounds(Counter):
    """rlmesh.v2.obs-in-space: the first observation element leaves its Box (the server only warns)."""

    def observation(self):
        return np.array([42.0, self.count], dtype=np.float32)


class NanReward(Counter):
    """rlmesh.s1.reward-finite: every step's reward is NaN."""

    def reward(self) -> float:
        return float("nan")


class IgnoresSeed(Counter):
    """rlmesh.s4.seeded-replay: the start is drawn from fresh entropy whatever the seed."""

    def reset(self, *, seed=None, options=None):
        super().reset(seed=None)
        self.position = float(np.random.default_rng().uniform(-1, 1))
        return self.observation(), {}


class InfoNotAMap(Counter):
    """rlmesh.s1.answered: step returns a list as its info, so the server answers a valid step with an error."""

    def info(self):
        return [self.count]


class NanObservation(Counter):
    """rlmesh.s1.answered: a NaN observation makes the server turn every reset into an INTERNAL error."""

    def observation(self):
        return np.array([np.nan, self.count], dtype=np.float32)


class RenderRaises(Counter):
    """rlmesh.r1.render: render() raises, which ends the session instead of answering "no frame"."""

    def render(self):
        raise NotImplementedError("this env cannot render")


class UndeclaredRenderMode(Counter):
    """rlmesh.h1.render-mode-declared: render_mode is not among metadata's render_modes."""

    render_mode = "rgb_array"
    metadata = {"render_modes": ["human"]}

    def render(self):
        return np.zeros((8, 8, 3), dtype=np.uint8)


class LastBitReward(Counter):
    """Conforming, but its reward is one float64 bit above 1.0 (a parity pair for `lanes`, differing in one lane)."""

    def reward(self) -> float:
        return float(np.nextafter(1.0, 2.0))


ENVS = {
    "cartpole": lambda: gym.make("CartPole-v1"),
    "vector": lambda: gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")] * 3),
    "lanes": lambda: [Counter() for _ in range(3)],
    "lanes-last-differs": lambda: [Counter(), Counter(), LastBitReward()],
    "threaded-lanes": lambda: [OwnThread(), OwnThread(), OwnThread(episode_length=1)],
    "composite": Composite,
    "time-limited": time_limited,
    "obs-out-of-bounds": lambda: [ObsOutOfBounds() for _ in range(2)],
    "nan-reward": NanReward,
    "ignores-seed": lambda: [IgnoresSeed() for _ in range(2)],
    "info-not-a-map": InfoNotAMap,
    "nan-observation": NanObservation,
    "render-raises": RenderRaises,
    "undeclared-render-mode": UndeclaredRenderMode,
    "never-ends": NeverEnds,
}


def main(argv: list[str]) -> int:
    from rlmesh import EnvServer, ServeOptions  # noqa: PLC0415

    name = argv[0]
    allow_shutdown = "--allow-shutdown" in argv
    server = EnvServer(
        ENVS[name](),
        "127.0.0.1:0",
        options=ServeOptions(workflow_edition="2026.06", allow_remote_shutdown=allow_shutdown),
    )
    server.start()
    print(server.address.removeprefix("tcp://"), flush=True)
    server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
