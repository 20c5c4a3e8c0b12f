"""An env that declares concurrent sessions but keeps its RNG on the class, reseeded by every reset.

A lone episode is reproducible; in a parallel group the last reset seeds the
generator every session then draws from in turn, so identical episodes differ.
Broken clause: openenv.determinism.group (isolation breaks with it).
"""

from __future__ import annotations

import random

from tests.checks.openenv.envs import QuizEnv, quiz_app


class SharedRngQuizEnv(QuizEnv):
    shared_rng = random.Random(0)

    def reset(self, seed=None, episode_id=None, task_id="t1", **kwargs):
        observation = super().reset(seed, episode_id, task_id, **kwargs)
        type(self).shared_rng.seed(seed if seed is not None else 0)
        self._rng = type(self).shared_rng
        return observation


def make_app():
    return quiz_app(SharedRngQuizEnv)
