"""A server that shows OpenEnv 0.10 and attaches /ws?session_id= to HTTP MCP sessions, except that
even the id of the session it just opened is refused. Hand-written. Clause: openenv.attach.session (warn).
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(tasks="consistent", mcp="jsonrpc", attach="refuses-own"))
