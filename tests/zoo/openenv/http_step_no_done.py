"""HTTP /step answers a valid action without `done` (an invalid one still gets 422). Broken clause:
openenv.http.step."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Response
from pydantic import ValidationError

from tests.checks.openenv.envs import QuizAction, quiz_app
from tests.zoo.openenv.rerouted import reroute


def answering(done: bool, refused_status: int):
    """A POST /step endpoint: 422-style refusal (with `refused_status`) or an observation, with done if asked."""

    def step(body: dict[str, Any], response: Response) -> dict[str, Any]:
        try:
            QuizAction.model_validate(body.get("action"))
        except ValidationError as exc:
            response.status_code = refused_status
            return {"detail": json.loads(exc.json())}
        observation = {"prompt": "", "feedback": "correct", "nonce": 0.0, "metadata": {}}
        return {"observation": observation, "reward": 1.0, **({"done": True} if done else {})}

    return step


def make_app():
    return reroute(quiz_app(), "/step", ["POST"], answering(done=False, refused_status=422))
