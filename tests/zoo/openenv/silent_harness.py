"""A server with no harness that still accepts the /harness handshake, then sends nothing.

OpenEnv refuses that handshake (403) unless a harness env runs in production mode, and a
harness session starts with a session_started frame. Hand-written.
Clause: openenv.production.harness (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(silent_harness=True))
