"""/schema advertises an optional `hint` member that /ws refuses: the schema is not the model that validates.

Every listed action leaves `hint` out, so only an action the suite builds from
/schema with that optional member set shows the drift.
Hand-written. Broken clause: openenv.schema.action-accepted (naming 'hint').
"""

from __future__ import annotations

from tests.zoo.openenv_handmade import Quirks, build_app

EXPECTED = "openenv.schema.action-accepted"
ALSO: set[str] = set()
OPTIONS: dict = {}
NAMED = "'hint'"


def make_app():
    return build_app(Quirks(advertise_hint=True))
