"""OpenEnv 0.10 on both sides of the tap, run by that release's venv python (never the project's):

    python openenv010_peer.py serve PORT    # a counting env served by openenv's own create_fastapi_app
    python openenv010_peer.py drive URL     # openenv's own GenericEnvClient: two episodes of four steps

`drive` prints one line per reply it got, then DONE.
"""

from __future__ import annotations

import sys
from typing import Any


def serve(port: int) -> None:
    import uvicorn
    from openenv.core.env_server.http_server import create_fastapi_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
    from pydantic import Field

    class CountAction(Action):
        add: int = Field(1, ge=0, le=10)

    class CountObservation(Observation):
        total: int = 0

    class CountEnv(Environment[CountAction, CountObservation, State]):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._state = State(step_count=0)
            self.total = 0

        def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> CountObservation:
            self._state = State(step_count=0, episode_id=episode_id)
            self.total = 0
            return CountObservation(total=0, done=False, reward=None)

        def step(self, action: CountAction, timeout_s: float | None = None, **kwargs: Any) -> CountObservation:
            self._state.step_count += 1
            self.total += action.add
            done = self._state.step_count >= 4
            return CountObservation(total=self.total, done=done, reward=1.0 if done else 0.0)

        @property
        def state(self) -> State:
            return self._state

    app = create_fastapi_app(CountEnv, CountAction, CountObservation, max_concurrent_envs=4)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def drive(url: str) -> None:
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=url).sync() as env:
        for episode in range(2):
            result = env.reset(episode_id=f"ep-{episode}")
            print("reset", result.observation, flush=True)
            while not result.done:
                result = env.step({"add": 2})
                print("step", result.observation, result.reward, result.done, flush=True)
            print("state", env.state(), flush=True)
    print("DONE", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
    else:
        drive(sys.argv[2])
