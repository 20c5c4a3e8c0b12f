"""A state whose step_count starts at -1 after a reset. Broken clause: openenv.state.shape (and the
count itself, openenv.state.step-count)."""

from __future__ import annotations

from tests.checks.openenv.envs import QuizEnv, quiz_app


class OffByMinusOneQuizEnv(QuizEnv):
    @property
    def state(self):
        shown = super().state
        return shown.model_copy(update={"step_count": shown.step_count - 1})  # model_copy does not validate


def make_app():
    return quiz_app(OffByMinusOneQuizEnv)
