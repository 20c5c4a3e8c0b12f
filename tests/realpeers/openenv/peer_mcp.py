"""An env on OpenEnv's MCP base class (MCPEnvironment over a FastMCP server) with one tool."""

from __future__ import annotations

import uuid
from typing import Any

from fastmcp import FastMCP
from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.mcp_types import CallToolAction, CallToolObservation
from openenv.core.env_server.types import Observation, State
from peer_envs import create


class CalculatorEnv(MCPEnvironment):
    """The tool `add`; any other action is answered with an empty observation."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        server = FastMCP("calculator")

        @server.tool
        def add(a: int, b: int) -> int:
            """Add two integers."""
            return a + b

        super().__init__(server)
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> Observation:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()), step_count=0)
        return Observation(done=False, reward=None)

    def step(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1  # the base answers tool calls itself; the count is this env's
        return super().step(action, timeout_s, **kwargs)

    async def step_async(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1  # the /ws path steps asynchronously
        return await super().step_async(action, timeout_s, **kwargs)

    def _step_impl(self, action: Any, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        return Observation(done=False, reward=None)

    @property
    def state(self) -> State:
        return self._state


def calculator_app() -> Any:
    """Reset sends a plain Observation: 0.10 publishes it as the reset observation, 0.3.0 cannot."""
    return create(
        CalculatorEnv,
        CallToolAction,
        CallToolObservation,
        env_name="calculator",
        max_concurrent_envs=8,
        reset_observation_cls=Observation,
    )
