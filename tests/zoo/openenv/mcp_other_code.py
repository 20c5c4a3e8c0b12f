"""POST /mcp answers every bad body with a JSON-RPC 2.0 error, but always code -32603 (internal error).

A JSON-RPC error response, so nothing fails; the codes are not the ones
JSON-RPC assigns to a parse error and an invalid request, so the suite warns.
Hand-written. Clause: openenv.mcp.error-code (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(mcp="other-code"))
