"""A /schema whose observation requires a `score` member no observation carries.

Broken clause: openenv.schema.observation-valid.
"""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import original, reroute


def make_app():
    app = quiz_app()
    published = original(app, "/schema")

    async def schema():
        body = await published()
        observation = body["observation"]
        observation["properties"] = {**observation.get("properties", {}), "score": {"type": "number"}}
        observation["required"] = [*observation.get("required", []), "score"]
        return body

    return reroute(app, "/schema", ["GET"], schema)
