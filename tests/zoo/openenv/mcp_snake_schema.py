"""POST /mcp tools/list spells each tool's schema `input_schema`, as openenv-core 0.3.0 does under fastmcp 4.

MCP names the member `inputSchema`; an MCP client finds no schema. Hand-written.
Clause: openenv.mcp.input-schema (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(mcp="snake-schema"))
