"""A server that says hello as soon as a session opens, before the client has asked anything.

A client reading the next frame as the reply to its reset gets the greeting,
and every reply after it is one frame late. Hand-written.
Broken clause: openenv.ws.unprompted (the rest of the suite reads past the greeting).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(greeting=True, capacity=3))
