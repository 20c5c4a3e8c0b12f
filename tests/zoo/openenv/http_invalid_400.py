"""HTTP /step refuses an action off /schema.action with 400, not 422. Broken clause:
openenv.http.invalid-action."""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.http_step_no_done import answering
from tests.zoo.openenv.rerouted import reroute


def make_app():
    return reroute(quiz_app(), "/step", ["POST"], answering(done=True, refused_status=400))
