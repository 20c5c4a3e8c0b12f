"""An env whose reset takes no task_id and no **kwargs: openenv-core drops the key without a word.

Every session plays the default task. Broken clause: openenv.reset.task-id.
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class DefaultTaskQuizEnv(QuizEnv):
    def reset(self, seed=None, episode_id=None):  # no task_id, no **kwargs
        return super().reset(seed, episode_id)


def make_app():
    return quiz_app(DefaultTaskQuizEnv)
