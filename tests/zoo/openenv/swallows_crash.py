"""An env that catches its own crash and answers an observation instead of raising: no EXECUTION_ERROR.

Broken clause: openenv.errors.execution.
"""

from __future__ import annotations

from tests.checks.openenv.envs import CRASH_ANSWER, QuizEnv, QuizObservation, quiz_app


class SwallowingQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        if action.answer == CRASH_ANSWER:
            return QuizObservation(feedback="something went wrong", done=True, reward=0.0)
        return super().step(action, timeout_s, **kwargs)


def make_app():
    return quiz_app(SwallowingQuizEnv)
