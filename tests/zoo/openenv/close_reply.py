"""A close message answered with a frame of its own before the close.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.close.clean.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(reply_to_close=True))
