"""A server whose whole process exits on a binary frame: one hostile client takes every session down.

Runs as its own process (the checker's hostile input ends it). Hand-written.
Broken clause: openenv.survive.hostile.
"""

from __future__ import annotations

from tests.zoo.openenv_handmade import Quirks, build_app, serve_forever

EXPECTED = "openenv.survive.hostile"
ALSO = {"openenv.survive.clean-end"}
OPTIONS: dict = {}
RUN_AS_PROCESS = True


def make_app():
    return build_app(Quirks(exit_on_binary=True))


if __name__ == "__main__":
    serve_forever(make_app())
