"""An env that scores with booleans: the /ws frame carries reward true, not a number.

Legal by the observation type, but HTTP /step sends the same reward as 1.0: a SHOULD.
Broken clause: openenv.ws.reward-number.
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class BooleanRewardQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        observation.reward = bool(observation.reward)
        return observation


def make_app():
    return quiz_app(BooleanRewardQuizEnv)
