"""POST /mcp parses its body unguarded: a body that is not JSON becomes a plain-text 500.

JSON-RPC 2.0 requires a parse-error response instead.
Hand-written. Broken clause: openenv.mcp.error-object.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(mcp="crash"))
