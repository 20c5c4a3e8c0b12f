"""Non-object JSON leaves the session open but deaf: no SESSION_ERROR, no close, no answer. Hand-written.

Broken clause: openenv.survive.clean-end (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app

OPTIONS = {"timeout": 2.0}


def make_app():
    return build_app(Quirks(mute_on_non_object=True))
