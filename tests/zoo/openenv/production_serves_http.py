"""A server whose OpenAPI shows production mode (no /reset, /step, /state) while those routes still answer.

OpenEnv 0.10 in production mode answers them 404. Hand-written.
Clause: openenv.production.http-absent (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(production="served-unlisted"))
