"""An env that declares concurrent sessions but keeps the current task on the class: sessions bleed.

The last reset of a parallel group picks the task every session is scored on.
Broken clause: openenv.isolation.sessions.
"""

from __future__ import annotations

from tests.checks.openenv.envs import TASKS, QuizEnv, quiz_app


class SharedTaskQuizEnv(QuizEnv):
    shared_task = "t1"

    def reset(self, seed=None, episode_id=None, task_id="t1", **kwargs):
        observation = super().reset(seed, episode_id, task_id, **kwargs)
        type(self).shared_task = self._task
        return observation

    def score(self, answer: str) -> float:
        return TASKS[type(self).shared_task][1].get(answer.strip().lower(), 0.0)


def make_app():
    return quiz_app(SharedTaskQuizEnv)
