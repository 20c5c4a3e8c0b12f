"""An env that scores with strings: the /ws frame carries reward "1.0", which no reward type allows.

Broken clause: openenv.ws.reward (a reward is null, a boolean or a finite number).
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class StringRewardQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        # Past the model's validation (it would coerce "1.0" back to a float): the string reaches the wire.
        observation.__dict__["reward"] = str(float(observation.reward or 0.0))
        return observation


def make_app():
    return quiz_app(StringRewardQuizEnv)
