"""Steps of 50 ms against a declared latency bound of 20 ms. Broken clause: openenv.latency.bound."""

from __future__ import annotations

from tests.checks.openenv.envs import slow_quiz_app

OPTIONS = {"latency_bound_ms": 20}


def make_app():
    return slow_quiz_app()
