"""A reset that reseeds only `if seed:`, so seed 0 leaves the RNG running on from the last episode.

Fresh sessions still look deterministic and other seeds still differ; only a
seed-0 episode replayed in the same session drifts. Hand-written.
Broken clause: openenv.reset.seed-replay.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(reseed_if_truthy=True))
