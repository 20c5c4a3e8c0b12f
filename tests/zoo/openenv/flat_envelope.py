"""Observation fields put straight into data, as custom servers copied from blog posts do.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.ws.envelope.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(flat_envelope=True))
