"""A server that shows OpenEnv 0.10 (it serves the task API) but leaves `metadata` out of HTTP /reset and /step.

0.10 always puts a top-level metadata key (null when empty) in those bodies.
Hand-written. Clause: openenv.http.metadata (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="consistent", http_metadata=False))
