"""What the ORS suite is told about its target, and what one run learns about it.

Defaults suit a real server: the first listed env and split, and the tools it
lists, each called with an input made from its input_schema (`checks.ors.survey`);
a tool option only narrows which tool a clause uses. Only the slow tool of the
opt-in keep-alive phase must be named.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pydantic

from checks.core import PhaseContext, SuiteOptions
from checks.http_options import HttpOptions

ToolInput = dict[str, Any] | None


class OrsOptions(SuiteOptions, HttpOptions):
    env: str | None = pydantic.Field(None, description="Environment to drive; None: the first listed.")
    split: str | None = pydantic.Field(None, description="Split whose task 0 the sessions run; None: the first.")
    tool: str | None = pydantic.Field(None, description="Tool the call phase uses; None: the first listed.")
    tool_input: ToolInput = pydantic.Field(None, description="Its input; None: made from its input_schema.")
    big_output_tool: str | None = pydantic.Field(
        None, description="A tool whose result is over 4 KB (chunked); None: chunking is judged only if seen."
    )
    big_output_input: ToolInput = pydantic.Field(None, description="Its input; None: made from its input_schema.")
    raising_tool: str | None = pydantic.Field(
        None, description="A tool known to raise; None: the listed tools that fail when called."
    )
    raising_input: ToolInput = pydantic.Field(None, description="Its input; None: made from its input_schema.")
    max_steps: int = pydantic.Field(8, ge=1, le=200, description="Calls made to reach finished: true.")
    creates: int = pydantic.Field(20, ge=2, le=200, description="POST /create_session calls to judge id uniqueness.")
    slow_tool: str | None = pydantic.Field(
        None, description="keep-alive phase: a tool that runs longer than keepalive_gap; None: not judged."
    )
    slow_input: ToolInput = pydantic.Field(None, description="Its input; None: made from its input_schema.")
    keepalive_gap: float = pydantic.Field(30.0, gt=0, le=600, description="Longest silence allowed in a stream.")
    idle_expiry: float = pydantic.Field(900.0, gt=0, le=3600, description="Seconds of idleness that end a session.")
    expiry_margin: float = pydantic.Field(
        10.0, ge=0, le=600, description="Seconds past idle_expiry before an expired session must be gone."
    )
    ping_every: float = pydantic.Field(60.0, gt=0, le=600, description="Ping period of the keeps-alive probe.")


@dataclass
class OrsState:
    """What one run has learned: the env, its tools (name -> ToolSpec), the split it runs, what each tool
    answered once (`survey.survey`) and the tool the phases drive."""

    env: str | None = None
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    split: str | None = None
    task_tools_asked: bool = False
    survey: list[Any] | None = None  # stream.ToolCall per surveyed tool
    tool: str | None = None
    http: Any = None  # the run's one OrsClient (routes.client makes it; routes.close_state closes it)


Ctx = PhaseContext[OrsOptions, OrsState]
