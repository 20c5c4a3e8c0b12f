"""At capacity the server drops the socket with 1013 and says nothing: no CAPACITY_REACHED frame.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.capacity.reached.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(capacity=2, capacity_frame=False))
