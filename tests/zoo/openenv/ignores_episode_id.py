"""An env that names every episode itself, whatever episode_id the reset carried.

Broken clause: openenv.state.episode-id.
"""

from __future__ import annotations

from openenv.core.env_server.types import State

from tests.checks.openenv.envs import QuizEnv, quiz_app


class OwnIdQuizEnv(QuizEnv):
    def reset(self, seed=None, episode_id=None, task_id="t1", **kwargs):
        observation = super().reset(seed, None, task_id, **kwargs)
        self._state = State(episode_id="episode", step_count=0)
        return observation


def make_app():
    return quiz_app(OwnIdQuizEnv)
