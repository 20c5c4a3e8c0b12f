"""A session closed right after a refused action, so the episode cannot go on.

Broken clause: openenv.action.session-usable (the pipelined session of the session phase, cut
after its odd step, also fails openenv.ws.order and openenv.state.step-count).
"""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import closing_after


def make_app():
    return closing_after(quiz_app(), '"VALIDATION_ERROR"')
