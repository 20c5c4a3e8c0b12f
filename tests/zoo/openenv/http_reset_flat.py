"""HTTP /reset answers an observation that is a string, not an object. Broken clause: openenv.http.reset."""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import reroute


def make_app():
    return reroute(
        quiz_app(), "/reset", ["POST"], lambda: {"observation": "capital of France?", "reward": None, "done": False}
    )
