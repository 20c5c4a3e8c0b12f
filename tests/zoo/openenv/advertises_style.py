"""/schema advertises an optional `style` member with two allowed values that /ws refuses as an extra field.

Every listed action leaves `style` out, so only an action the suite builds
from /schema with that optional enum member set shows the drift.
Hand-written. Broken clause: openenv.schema.action-accepted (naming 'style').
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(advertise_style=True))
