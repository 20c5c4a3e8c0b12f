"""Envs on OpenEnv's own base classes, served by its own create_app, for the real-peer tests.

Imported by a peer venv's python (openenv 0.10.0 or openenv-core 0.3.0), never
by the project's: `uvicorn --factory peer_envs:<name>_app`.
"""

from __future__ import annotations

import inspect
import random
import uuid
from typing import Any

from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class GuessAction(Action):
    guess: int = Field(ge=0, le=9)


class GuessObservation(Observation):
    hint: str = ""


class GuessResetObservation(GuessObservation):
    """What a reset shows: the range to guess in (its own reset observation class)."""

    low: int = 0
    high: int = 9


class GuessEnv(Environment[GuessAction, GuessObservation, State]):
    """Guess a seeded digit in one step; seeds, episode ids and tasks are honoured, sessions run at once."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._secret = 0

    # The task API (OpenEnv 0.10's TaskProvider): three tasks, each a seed; reset takes split and index.
    TASKS = {"test": [{"seed": 11}, {"seed": 12}, {"seed": 13}]}

    def list_splits(self) -> list[str]:
        return list(self.TASKS)

    def list_tasks(self, split: str) -> list[Any]:
        return self.TASKS[split]

    def num_tasks(self, split: str) -> int:
        return len(self.TASKS[split])

    def get_task(self, split: str, index: int) -> Any:
        return self.TASKS[split][index]

    def get_task_range(self, split: str, start: int | None = None, stop: int | None = None) -> list[Any]:
        return self.TASKS[split][start:stop]

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str | None = None,
        index: int | None = None,
        **kwargs: Any,
    ) -> GuessObservation:
        if split is not None and index is not None:
            seed = self.TASKS[split][index]["seed"]
        self._secret = random.Random(seed if seed is not None else 0).randrange(10)
        self._state = State(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
        return GuessResetObservation(low=0, high=9, hint="guess a digit", reward=None)

    def step(self, action: GuessAction, timeout_s: float | None = None, **kwargs: Any) -> GuessObservation:
        self._state.step_count += 1
        right = action.guess == self._secret
        return GuessObservation(hint="right" if right else "wrong", done=True, reward=1.0 if right else 0.0)

    @property
    def state(self) -> State:
        return self._state


class CountAction(Action):
    add: int = Field(1, ge=1, le=3)


class CountObservation(Observation):
    total: int = 0


class CountEnv(Environment[CountAction, CountObservation, State]):
    """Deterministic: count to 6, then done with reward 1; nothing depends on a seed."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    GOAL = 6

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._total = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CountObservation:
        self._total = 0
        self._state = State(episode_id=episode_id or "count", step_count=0)
        return CountObservation(total=0, reward=None)

    def step(self, action: CountAction, timeout_s: float | None = None, **kwargs: Any) -> CountObservation:
        self._state.step_count += 1
        self._total += action.add
        done = self._total >= self.GOAL
        return CountObservation(total=self._total, done=done, reward=1.0 if done else 0.0)

    @property
    def state(self) -> State:
        return self._state


class EndlessCountEnv(CountEnv):
    """Counts for ever: done is never true, and every step is scored 0.5."""

    def step(self, action: CountAction, timeout_s: float | None = None, **kwargs: Any) -> CountObservation:
        self._state.step_count += 1
        self._total += action.add
        return CountObservation(total=self._total, done=False, reward=0.5)


def create(env: type, action: type, observation: type, **extra: Any) -> Any:
    """create_app with the keyword arguments this version of the package takes (0.3.0 lacks some)."""
    known = inspect.signature(create_app).parameters
    return create_app(env, action, observation, **{k: v for k, v in extra.items() if k in known})


def own_reset_app() -> Any:
    """Its own reset observation class (published in /schema by 0.10) and eight concurrent sessions."""
    return create(
        GuessEnv,
        GuessAction,
        GuessObservation,
        env_name="guess",
        max_concurrent_envs=8,
        reset_observation_cls=GuessResetObservation,
    )


def deterministic_app() -> Any:
    return create(CountEnv, CountAction, CountObservation, env_name="count", max_concurrent_envs=8)


def endless_app() -> Any:
    return create(EndlessCountEnv, CountAction, CountObservation, env_name="endless", max_concurrent_envs=8)


def capacity_one_app() -> Any:
    return create(CountEnv, CountAction, CountObservation, env_name="count")


def mcp_app() -> Any:
    from peer_mcp import calculator_app

    return calculator_app()


# path prefix -> the app served there by `mounted_app`: one process per venv serves them all,
# since importing the package costs seconds per process.
MOUNTS = {
    "mcp": mcp_app,
    "own-reset": own_reset_app,
    "deterministic": deterministic_app,
    "endless": endless_app,
    "capacity-one": capacity_one_app,
}


def mounted_app() -> Any:
    """Each env's own create_app, mounted under /<prefix>; its /ws, /schema, ... are below that."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    return Starlette(routes=[Mount(f"/{prefix}", app=factory()) for prefix, factory in MOUNTS.items()])
