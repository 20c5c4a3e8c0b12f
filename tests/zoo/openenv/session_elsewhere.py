"""A server whose HTTP side is complete but whose session endpoint is /env/ws, not /ws.

Discovery, HTTP /reset and /step all answer; every session fails its upgrade.
Hand-written. Broken clause: openenv.ws.handshake. The session clauses cannot
be exercised and come out as errors, not as failures of their own.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app


def make_app():
    return build_app(Quirks(ws_path="/env/ws"))
