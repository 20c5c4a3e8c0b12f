"""The `openai-chat` target kind: an OpenAI-compatible chat completions endpoint used for RL rollouts."""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.openai.clauses import CATALOGUE
from checks.openai.options import OpenAIChatOptions, OpenAIState
from checks.openai.phase_chat import chat_phase
from checks.openai.phase_models import models_phase

PHASES = (
    Phase("models", models_phase, ("openai.models.list",), "GET /models, then a chat naming a listed model"),
    Phase(
        "chat",
        chat_phase,
        (
            "openai.chat.shape",
            "openai.chat.finish-reason",
            "openai.usage.consistent",
            "openai.usage.within-max-tokens",
            "openai.usage.prompt-stable",
            "openai.limits.max-tokens",
            "openai.http.hygiene",
            "openai.chat.n-choices",
            "openai.unicode.round-trip",
        ),
        "a minimal chat twice, max_tokens 1, n 2 and UTF-8 text",
    ),
)

SUITE = Suite(
    kind="openai-chat",
    title="OpenAI-compatible chat completions endpoint",
    url_schemes=("http", "https"),
    options_model=OpenAIChatOptions,
    phases=PHASES,
    catalogue=CATALOGUE,
    new_state=OpenAIState,
    spec_version="OpenAI chat completions (miles.md 8a)",
    url_example="http://127.0.0.1:8000/v1",
)
