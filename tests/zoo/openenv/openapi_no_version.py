"""An OpenAPI document without info.version. Broken clause: openenv.discover.openapi (warn)."""

from __future__ import annotations

import copy

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import reroute


def make_app():
    app = quiz_app()
    document = copy.deepcopy(app.openapi())
    del document["info"]["version"]
    return reroute(app, "/openapi.json", ["GET"], lambda: document)
