"""POST /mcp answers bad requests with a REST-style 400 {"detail": ...}, not a JSON-RPC 2.0 error.

Hand-written. Broken clause: openenv.mcp.error-object.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(mcp="plain"))
