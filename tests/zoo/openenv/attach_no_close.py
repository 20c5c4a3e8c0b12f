"""A server that shows OpenEnv 0.10 and attaches /ws?session_id= to HTTP MCP sessions, except that
openenv/session/close answers an error. Hand-written. Clause: openenv.attach.close (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="consistent", mcp="jsonrpc", attach="no-close"))
