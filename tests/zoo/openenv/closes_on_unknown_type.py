"""A message of an unknown type ends the session with close code 1011 instead of an UNKNOWN_TYPE error.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.errors.unknown-type.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(close_on_unknown_type=True))
