"""The stock template's max_concurrent_envs=1: a GRPO group of five loses four sessions.

Broken clause: openenv.capacity.group.
"""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


def make_app():
    return quiz_app(QuizEnv, max_sessions=1)
