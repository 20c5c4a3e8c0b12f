"""A refused action answered with EXECUTION_ERROR instead of VALIDATION_ERROR.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.action.rejected.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(validation_code="EXECUTION_ERROR"))
