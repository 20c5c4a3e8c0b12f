"""/schema advertises an optional `hint` member that /ws refuses: the schema is not the model that validates.

Every listed action leaves `hint` out, so only an action the suite builds from
/schema with that optional member set shows the drift.
Hand-written. Broken clause: openenv.schema.action-accepted (naming 'hint').
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(advertise_hint=True))
