"""Only a close message frees a slot: clients that vanish leave it taken for ever.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.close.frees-slot.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(capacity=3, free_slot_on_disconnect=False))
