"""POST /mcp tools/call without a tool name gets -32601 (method not found), not -32602 (invalid params).

Hand-written. Clause: openenv.mcp.missing-name (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(mcp="missing-name-other-code"))
