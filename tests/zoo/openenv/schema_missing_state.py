"""A /schema that leaves out the state schema: the three JSON schemas are what a client builds on.

Broken clause: openenv.discover.schema (the phases needing /schema.action then stop, unexercised).
"""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import original, reroute


def make_app():
    app = quiz_app()
    published = original(app, "/schema")

    async def schema():
        body = await published()
        return {key: value for key, value in body.items() if key != "state"}

    return reroute(app, "/schema", ["GET"], schema)
