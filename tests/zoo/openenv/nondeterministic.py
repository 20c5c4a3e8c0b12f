"""An env whose step draws from the unseeded global RNG: a GRPO group of identical episodes scores apart.

Broken clause: openenv.determinism.sequential (the parallel group differs too, and a seed
replayed in one session does not give its episode back).
"""

from __future__ import annotations

import random

from tests.checks.openenv.envs import QuizEnv, quiz_app


class UnseededQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        observation.nonce = random.random()
        return observation


def make_app():
    return quiz_app(UnseededQuizEnv)
