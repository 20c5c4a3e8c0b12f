"""/schema advertises the strict action, but the server validates with a lax one.

A non-string answer (one of the seed's odd actions) reaches step() and
crashes it: EXECUTION_ERROR instead of VALIDATION_ERROR. Over HTTP the same
action gives a 500. Broken clause: openenv.action.rejected.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action

from tests.checks.openenv.envs import QuizAction, QuizEnv, quiz_app


class LaxQuizAction(Action):
    answer: Any = None
    confidence: Any = 50

    @classmethod
    def model_json_schema(cls, *args, **kwargs):
        return QuizAction.model_json_schema(*args, **kwargs)


class TrustingQuizEnv(QuizEnv):
    def step(self, action, timeout_s=None, **kwargs):
        action.answer.strip()  # an int answer dies here, before the step is counted
        return super().step(action, timeout_s, **kwargs)


def make_app():
    return quiz_app(TrustingQuizEnv, LaxQuizAction)
