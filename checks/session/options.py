"""What the session-server suite is told about its target, and what one run learns about it.

The options extend the openai-chat options (the proxy is held to those
clauses, with the `miles-session` capability profile by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pydantic

from checks.core import PhaseContext
from checks.openai.options import OpenAIChatOptions, Preset

TreeOption = Literal["auto", "v1", "v2"]


class SessionOptions(OpenAIChatOptions):
    preset: Preset = pydantic.Field(
        "miles-session", description="Capability profile of the per-session proxy; the fields below override it."
    )
    tree: TreeOption = pydantic.Field(
        "auto", description="v1 (linear) or v2 (tree) semantics; auto reads metadata.tree from GET /sessions/{id}."
    )
    creates: int = pydantic.Field(8, ge=2, le=200, description="Sessions created to judge id uniqueness.")
    parallel_sessions: int = pydantic.Field(4, ge=2, le=32, description="Sessions driven at once for crosstalk.")
    overflow_chars: int = pydantic.Field(
        40_000,
        ge=16,
        le=4_000_000,
        description="Characters of a prompt the backend must refuse as too long (a failed call that is not recorded).",
    )


@dataclass
class SessionState:
    """What one run has learned: the tree mode (v1/v2) and the model id the backend serves."""

    tree: str | None = None
    model: str | None = None


Ctx = PhaseContext[SessionOptions, SessionState]
