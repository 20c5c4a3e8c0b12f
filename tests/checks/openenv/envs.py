"""Small OpenEnv environments served by openenv-core in the tests: the conforming peers.

QuizEnv answers questions (concurrent sessions, seeded nonce); SlowQuizEnv
takes 50 ms per step; EchoEnv allows one session at a time; WalkEnv takes
several steps to reach its goal; MoveEnv takes nested, constrained actions and
scores with integers; FormEnv's action has optional members of many kinds.
"""

from __future__ import annotations

import datetime
import enum
import ipaddress
import random
import time
import uuid
from typing import Any, Literal

from fastapi import FastAPI
from openenv.core.env_server.http_server import HTTPEnvServer, create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import UUID4, AnyUrl, BaseModel, EmailStr, Field

from checks.openenv.reference import DEMO_OPTIONS

# task id -> (prompt, {answer: reward}); the "null" task is the seed's: its answer scores 0.5.
TASKS: dict[str, tuple[str, dict[str, float]]] = {
    "t1": ("capital of France?", {"paris": 1.0, "half": 0.5}),
    "t2": ("2+2?", {"4": 1.0, "half": 0.5}),
    "null": ("say done", {"done": 0.5}),
}
CRASH_ANSWER = "boom"


class QuizAction(Action):
    answer: str = Field(min_length=1, max_length=64)
    confidence: int = Field(50, ge=0, le=100)


class QuizObservation(Observation):
    prompt: str = ""
    feedback: str = ""
    nonce: float = 0.0


class QuizEnv(Environment[QuizAction, QuizObservation, State]):
    """One question per episode; the step's nonce comes from the seed, so seeding shows on the wire."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._task = "t1"
        self._rng = random.Random(0)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str = "t1", **kwargs: Any
    ) -> QuizObservation:
        self._task = task_id if task_id in TASKS else "t1"
        self._rng = random.Random(seed if seed is not None else 0)
        self._state = State(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
        return QuizObservation(prompt=self.prompt(), done=False, reward=None)

    def prompt(self) -> str:
        return TASKS[self._task][0]

    def score(self, answer: str) -> float:
        return TASKS[self._task][1].get(answer.strip().lower(), 0.0)

    def step(self, action: QuizAction, timeout_s: float | None = None, **kwargs: Any) -> QuizObservation:
        if action.answer == CRASH_ANSWER:
            raise RuntimeError("simulated env crash")
        self._state.step_count += 1
        reward = self.score(action.answer)
        return QuizObservation(
            prompt="", feedback="correct" if reward else "wrong", nonce=self._rng.random(), done=True, reward=reward
        )

    @property
    def state(self) -> State:
        return self._state


class SlowQuizEnv(QuizEnv):
    """A step that waits 50 ms (a remote grader, say) in its session's own executor thread."""

    STEP_SECONDS = 0.05

    def step(self, action: QuizAction, timeout_s: float | None = None, **kwargs: Any) -> QuizObservation:
        time.sleep(self.STEP_SECONDS)
        return super().step(action, timeout_s, **kwargs)


class EchoAction(Action):
    text: str = Field(max_length=32)


class EchoObservation(Observation):
    echo: str = ""


class EchoEnv(Environment[EchoAction, EchoObservation, State]):
    """Served with the default capacity of one session; it ignores seeds and tasks."""

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> EchoObservation:
        self._state = State(episode_id=episode_id or "echo", step_count=0)
        return EchoObservation(echo="", reward=None)

    def step(self, action: EchoAction, timeout_s: float | None = None, **kwargs: Any) -> EchoObservation:
        self._state.step_count += 1
        return EchoObservation(echo=action.text, done=True, reward=1.0 if action.text == "hello" else 0.0)

    @property
    def state(self) -> State:
        return self._state


class WalkAction(Action):
    direction: Literal["right", "left"]


class WalkObservation(Observation):
    position: int = 0
    goal: int = 3


class WalkEnv(Environment[WalkAction, WalkObservation, State]):
    """Walk along a line to the goal; the episode ends at the goal or after MAX_STEPS steps."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    MAX_STEPS = 8

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)
        self._position, self._goal = 0, 3

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str = "near", **kwargs: Any
    ) -> WalkObservation:
        self._position, self._goal = 0, 5 if task_id == "far" else 3
        self._state = State(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
        return WalkObservation(position=0, goal=self._goal)

    def step(self, action: WalkAction, timeout_s: float | None = None, **kwargs: Any) -> WalkObservation:
        self._state.step_count += 1
        self._position += 1 if action.direction == "right" else -1
        reached = self._position == self._goal
        done = reached or self._state.step_count >= self.MAX_STEPS
        return WalkObservation(position=self._position, goal=self._goal, done=done, reward=1.0 if reached else 0.0)

    @property
    def state(self) -> State:
        return self._state


class Move(BaseModel):
    piece: Literal["pawn", "rook"]
    squares: list[int] = Field(min_length=1, max_length=4)


class MoveAction(Action):
    move: Move
    note: str | None = None
    weight: float = Field(0.5, gt=0, lt=1)


class MoveObservation(Observation):
    board: list[list[int]] = Field(default_factory=list)
    last: Move | None = None


class MoveEnv(Environment[MoveAction, MoveObservation, State]):
    """One move per episode; the schema nests a model, a Literal, a bounded list and exclusive bounds."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> MoveObservation:
        self._state = State(episode_id=episode_id or "move", step_count=0)
        return MoveObservation(board=[[0] * 3 for _ in range(3)])

    def step(self, action: MoveAction, timeout_s: float | None = None, **kwargs: Any) -> MoveObservation:
        self._state.step_count += 1
        return MoveObservation(
            board=[[len(action.move.squares)] * 3 for _ in range(3)],
            last=action.move,
            done=True,
            reward=1 if action.move.piece == "rook" else 0,
        )

    @property
    def state(self) -> State:
        return self._state


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Detail(BaseModel):
    level: int = Field(1, ge=1, le=3)
    tags: list[str] = Field(default_factory=list, max_length=2)


class FormAction(Action):
    """One required member and optional ones of every kind a schema can constrain."""

    answer: Literal["yes", "no"]
    when: datetime.datetime | None = None
    day: datetime.date | None = None
    wait: datetime.timedelta | None = None
    ticket: UUID4 | None = None
    contact: EmailStr | None = None
    link: AnyUrl | None = None
    address: ipaddress.IPv4Address | None = None
    colour: Colour = Colour.RED
    mode: Literal["fast", "slow"] = "fast"
    share: float = Field(0.5, gt=0, lt=1, multiple_of=0.25)
    count: int = Field(10, ge=5, le=50, multiple_of=5)
    flag: bool = False
    code: str = Field("abc", pattern=r"^[a-z]+$", max_length=8)
    detail: Detail | None = None
    scores: list[float] = Field(default_factory=list, max_length=3)


class FormEnv(Environment[FormAction, QuizObservation, State]):
    """Accepts any action its schema admits; rewards "yes"."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> QuizObservation:
        self._state = State(episode_id=episode_id or "form", step_count=0)
        return QuizObservation(prompt="fill the form")

    def step(self, action: FormAction, timeout_s: float | None = None, **kwargs: Any) -> QuizObservation:
        self._state.step_count += 1
        return QuizObservation(feedback=action.model_dump_json()[:200], done=True, reward=float(action.answer == "yes"))

    @property
    def state(self) -> State:
        return self._state


def quiz_app(env_class: type = QuizEnv, action_class: type = QuizAction, max_sessions: int = 8):
    return create_fastapi_app(env_class, action_class, QuizObservation, max_concurrent_envs=max_sessions)


def slow_quiz_app(env_class: type = SlowQuizEnv):
    return create_fastapi_app(env_class, QuizAction, QuizObservation, max_concurrent_envs=8)


def form_app():
    return create_fastapi_app(FormEnv, FormAction, QuizObservation, max_concurrent_envs=8)


def echo_app():
    return create_fastapi_app(EchoEnv, EchoAction, EchoObservation)


def walk_app():
    return create_fastapi_app(WalkEnv, WalkAction, WalkObservation, max_concurrent_envs=4)


def move_app():
    return create_fastapi_app(MoveEnv, MoveAction, MoveObservation, max_concurrent_envs=8)


def production_quiz_app():
    """Production mode: only /ws (and discovery) are served, no HTTP /reset, /step or /state."""
    app = FastAPI()
    HTTPEnvServer(QuizEnv, QuizAction, QuizObservation, max_concurrent_envs=8).register_routes(app, mode="production")
    return app


# Options a target of each kind would register with.
# The quiz here asks what the reference quiz asks, so its demo options fit it.
QUIZ_OPTIONS: dict[str, Any] = {**DEMO_OPTIONS, "timeout": 5.0}
# The seed's scenario: one task whose correct answer scores 0.5, five odd actions, a group of five.
SEED_OPTIONS: dict[str, Any] = {
    "reset": {"task_id": "null"},
    "actions": [{"answer": "done"}, {}, {"answer": "42", "tool": "calc", "x": 1}, {"answer": 0}, {"answer": None}],
    "expected_reward": 0.5,
    "group_size": 5,
    "deterministic": True,  # no seed is sent, so determinism and isolation are judged on this declaration
    "timeout": 5.0,
    "latency_rounds": 5,
}
ECHO_OPTIONS: dict[str, Any] = {
    "group_size": 1,
    "actions": [{"text": "hello"}, {"text": 5}],
    "expected_reward": 1.0,
    "timeout": 5.0,
    "latency_rounds": 5,
}
# No actions listed: the suite generates a valid one and invalid variants from the nested schema.
MOVE_OPTIONS: dict[str, Any] = {"timeout": 5.0, "latency_rounds": 5}
FORM_OPTIONS: dict[str, Any] = {"timeout": 5.0, "latency_rounds": 5}
WALK_OPTIONS: dict[str, Any] = {
    "reset": {"task_id": "near"},
    "contrast_task_id": "far",
    "group_size": 3,
    "max_steps": 8,
    "timeout": 5.0,
    "latency_rounds": 5,
    "actions": [{"direction": "right"}, {"direction": "up"}],
    "expected_reward": 1.0,
}
