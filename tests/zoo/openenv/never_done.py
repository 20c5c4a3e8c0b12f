"""An env whose episodes never end: every step says done false.

Broken clause: openenv.termination.within-budget.
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class EndlessQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        observation.done = False
        return observation


def make_app():
    return quiz_app(EndlessQuizEnv)
