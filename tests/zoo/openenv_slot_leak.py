"""Only a close message frees a slot: clients that vanish leave it taken for ever.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.close.frees-slot.
"""

from __future__ import annotations

from tests.zoo.openenv_handmade import Quirks, build_app

EXPECTED = "openenv.close.frees-slot"
ALSO: set[str] = set()
OPTIONS: dict = {"group_size": 3}


def make_app():
    return build_app(Quirks(capacity=3, free_slot_on_disconnect=False))
