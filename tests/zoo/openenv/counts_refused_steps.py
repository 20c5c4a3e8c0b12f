"""A server that counts every step message, refused or not: step_count moves on a VALIDATION_ERROR.

The refusal itself is well formed, so only the state shows that the rejected
action was taken as a step. Hand-written.
Broken clause: openenv.action.not-executed (the session's step count is off with it).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(count_refused_steps=True))
