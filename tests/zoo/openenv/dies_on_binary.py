"""A server whose whole process exits on a binary frame: one hostile client takes every session down.

Runs as its own process (the checker's hostile input ends it). Hand-written.
Broken clause: openenv.survive.hostile.
"""

from __future__ import annotations

from tests.zoo.openenv.handmade import Quirks, build_app, serve_forever


def make_app():
    return build_app(Quirks(exit_on_binary=True))


if __name__ == "__main__":
    serve_forever(make_app())
