"""GET /health answers 500 while the sessions work fine.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.discover.health.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(health_status=500))
