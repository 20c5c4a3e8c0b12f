"""An env that accepts a seed and ignores it: its RNG always starts from the same state.

Broken clause: openenv.reset.seed.
"""

from __future__ import annotations

import random

from tests.checks.openenv.envs import QuizEnv, quiz_app


class FixedSeedQuizEnv(QuizEnv):
    def reset(self, seed=None, episode_id=None, task_id="t1", **kwargs):
        observation = super().reset(seed, episode_id, task_id, **kwargs)
        self._rng = random.Random(1234)
        return observation


def make_app():
    return quiz_app(FixedSeedQuizEnv)
