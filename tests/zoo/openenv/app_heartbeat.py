"""A keep-alive done as an application message: {"type": "heartbeat"} after half a second of silence.

A client reading the next frame as the reply to its message gets the heartbeat
instead (WebSocket pings exist for this). Hand-written.
Broken clause: openenv.ws.unprompted.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(idle_heartbeat=0.5))
