"""A refused action answered with code INVALID_ACTION, none of OpenEnv's seven. Hand-written.

Broken clause: openenv.errors.codes (and openenv.action.rejected with it).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(validation_code="INVALID_ACTION"))
