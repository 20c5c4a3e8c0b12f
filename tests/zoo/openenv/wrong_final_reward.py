"""An env whose right answer scores 0.9 where the target declares the scripted episode ends with 1.0.

Broken clause: openenv.replay.expected-reward.
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class StingyQuizEnv(QuizEnv):
    def score(self, answer: str) -> float:
        return 0.9 * super().score(answer)


def make_app():
    return quiz_app(StingyQuizEnv)
