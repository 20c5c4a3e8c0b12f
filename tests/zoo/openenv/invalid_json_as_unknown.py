"""Malformed JSON answered with UNKNOWN_TYPE, not INVALID_JSON. Broken clause: openenv.errors.invalid-json."""

from __future__ import annotations

from tests.checks.openenv.envs import quiz_app
from tests.zoo.openenv.rerouted import rewriting_frames


def make_app():
    return rewriting_frames(quiz_app(), lambda text: text.replace('"INVALID_JSON"', '"UNKNOWN_TYPE"'))
