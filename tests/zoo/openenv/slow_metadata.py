"""A /metadata that trickles one byte every 0.2 s and never finishes (a README streamed from a slow disk).

Each read arrives within the timeout, so only a deadline on the whole answer
ends the request; without one the discovery phase would hang to its own
deadline and lose every clause. Hand-written. Broken clause: openenv.discover.metadata.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(slow_metadata=True))
