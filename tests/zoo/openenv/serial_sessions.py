"""An env whose 50 ms steps all run on one thread shared by every session (REQUIRES_SINGLE_THREAD_EXECUTOR).

openenv-core accepts the group of five, but a step sent on each session at
once takes as long as the five one after another: the sessions are served one
at a time. OpenEnv promises no concurrency, so the suite warns (a SHOULD).
Built on openenv-core. Clause: openenv.concurrency.overlap (warn).
"""

from __future__ import annotations

from tests.checks.openenv.envs import SlowQuizEnv, slow_quiz_app


class OneThreadQuizEnv(SlowQuizEnv):
    REQUIRES_SINGLE_THREAD_EXECUTOR = True


def make_app():
    return slow_quiz_app(OneThreadQuizEnv)
