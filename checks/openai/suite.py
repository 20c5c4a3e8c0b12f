"""The `openai-chat` target kind: an OpenAI-compatible chat completions endpoint used for RL rollouts."""

from __future__ import annotations

from checks.core import Phase, Suite
from checks.openai.clauses import CATALOGUE
from checks.openai.options import OpenAIChatOptions, OpenAIState
from checks.openai.phase_chat import chat_phase
from checks.openai.phase_concurrency import concurrency_phase
from checks.openai.phase_context import context_phase
from checks.openai.phase_determinism import DETERMINISM_CLAUSES, determinism_phase
from checks.openai.phase_errors import errors_phase
from checks.openai.phase_logprobs import logprobs_phase
from checks.openai.phase_models import models_phase
from checks.openai.phase_stream import STREAM_PHASE_CLAUSES, stream_phase
from checks.openai.phase_tools import TOOLS_PHASE_CLAUSES, tools_phase

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
    Phase(
        "tools",
        tools_phase,
        TOOLS_PHASE_CLAUSES,
        "a forced call, two parallel calls, a call cut by max_tokens 3, round trips in and out of order",
        budget=10.0,
    ),
    Phase(
        "logprobs",
        logprobs_phase,
        ("openai.logprobs.content", "openai.logprobs.absent-unless-asked"),
        "logprobs with top_logprobs 3, and a request without logprobs",
    ),
    Phase(
        "determinism",
        determinism_phase,
        DETERMINISM_CLAUSES,
        "one seeded temperature-0 request repeated serially and amid concurrent load",
        budget=8.0,
    ),
    Phase(
        "stream",
        stream_phase,
        STREAM_PHASE_CLAUSES,
        "text, a tool call and parallel calls each as JSON, SSE, JSON; a stream without include_usage; UTF-8",
        budget=12.0,
    ),
    Phase(
        "errors",
        errors_phase,
        (
            "openai.errors.rejects-invalid",
            "openai.messages.unknown-role",
            "openai.errors.status-400",
            "openai.errors.shape",
            "openai.errors.unknown-model",
            "openai.auth.required",
        ),
        "malformed JSON, no messages, a bad role, temperature 5, top_logprobs 21, n 0, an unknown model, auth",
        budget=8.0,
    ),
    Phase(
        "concurrency",
        concurrency_phase,
        ("openai.concurrency.parallel", "openai.concurrency.latency"),
        "parallel requests with a nonce each",
    ),
    Phase(
        "context",
        context_phase,
        ("openai.limits.context-overflow",),
        "a prompt half again as long as the declared context window",
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
    spec_version="OpenAI chat completions API",
    url_example="http://127.0.0.1:8000/v1",
)
