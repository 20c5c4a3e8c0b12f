"""Step frames carry metadata twice, as OpenEnv 0.10 does, but the top-level copy differs from the nested one.

Hand-written. Clause: openenv.ws.metadata-mirror (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(metadata_mismatch=True))
