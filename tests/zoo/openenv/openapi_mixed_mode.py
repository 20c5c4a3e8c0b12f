"""An OpenAPI document listing /reset and /step but not /state: neither mode. Broken clause:
openenv.mode.consistent."""

from __future__ import annotations

import copy

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import reroute


def make_app():
    app = quiz_app()
    document = copy.deepcopy(app.openapi())
    del document["paths"]["/state"]
    return reroute(app, "/openapi.json", ["GET"], lambda: document)
