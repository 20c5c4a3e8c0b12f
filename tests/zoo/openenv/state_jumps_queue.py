"""A state message sent right behind a step is answered before that step: replies out of order.

Only pipelined messages show it (one message at a time, each reply comes first). Broken clause:
openenv.ws.order.
"""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import answering_state_first


def make_app():
    return answering_state_first(quiz_app())
