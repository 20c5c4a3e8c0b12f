"""A walk whose goal pays -1 on a declared [0, 1] range: seen only once an episode runs three steps.

One-step sessions (session, actions) never see it; the group and termination
phases play the episode to its end. Broken clause: openenv.ws.reward-range, judged because
the options declare the range (nothing on the wire does, so by default it is only recorded).
"""

from __future__ import annotations

from openenv.core.env_server.http_server import create_fastapi_app

from tests.checks.openenv.envs import WalkAction, WalkEnv, WalkObservation


class PenaltyWalkEnv(WalkEnv):
    def step(self, action, timeout_s=None, **kwargs):
        observation = super().step(action, timeout_s, **kwargs)
        if observation.reward:
            observation.reward = -1.0
        return observation


OPTIONS = {
    "reset": {},
    "contrast_task_id": None,
    "actions": [{"direction": "right"}],
    "expected_reward": None,
    "crash_action": None,
    "reward_range": [0.0, 1.0],
}


def make_app():
    return create_fastapi_app(PenaltyWalkEnv, WalkAction, WalkObservation, max_concurrent_envs=4)
