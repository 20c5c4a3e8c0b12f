"""Observation fields put straight into data, as custom servers copied from blog posts do.

Hand-written (openenv-core cannot be made to do this). Broken clause: openenv.ws.envelope.
"""

from __future__ import annotations

from tests.zoo.openenv_handmade import Quirks, build_app

EXPECTED = "openenv.ws.envelope"
ALSO: set[str] = set()
OPTIONS: dict = {}


def make_app():
    return build_app(Quirks(flat_envelope=True))
