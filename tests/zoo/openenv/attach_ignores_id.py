"""A server that shows OpenEnv 0.10 and opens HTTP MCP sessions, but whose /ws ignores `?session_id=`.

An unknown id then gets a fresh session instead of SESSION_ERROR (what 0.3 did,
and 0.10 does not), and a second attach is not refused either. Hand-written.
Clause: openenv.attach.unknown-id (warn); knock-on openenv.attach.single.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="consistent", mcp="jsonrpc"))
