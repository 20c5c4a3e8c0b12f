"""What the openai-chat suite is told about its target: the model, the load, and the capability profile.

The profile says what the target offers (logprobs, honouring max_tokens,
strict validation, tools, streaming, determinism...). A preset fills it;
each field may override its preset. What the profile says is not offered
is `unsupported`, never a failure; what it says is offered is held to the
clause's level.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pydantic

from checks.core import PhaseContext, SuiteOptions
from checks.http_options import HttpOptions

# The presets a session server may take (it is no inference engine itself), and every preset of an
# OpenAI-compatible endpoint: those plus the engines RL rollouts run on.
Preset = Literal["strict-openai", "llmock", "miles-session"]
ChatPreset = Literal["strict-openai", "llmock", "miles-session", "vllm", "litellm", "llama-cpp"]
Offered = Literal["preset", "yes", "no"]
ErrorShape = Literal["openai", "miles"]
# The profile's yes/no capabilities, each an option that overrides its preset.
OFFERED_FIELDS = (
    "logprobs",
    "max_tokens",
    "strict_validation",
    "tools",
    "parallel_tool_calls",
    "streaming",
    "stream_usage",
    "n_choices",
    "deterministic",
)


@dataclass(frozen=True)
class Profile:
    """The resolved capabilities of a target."""

    logprobs: bool = True
    max_tokens: bool = True
    strict_validation: bool = True
    tools: bool = True
    parallel_tool_calls: bool = True
    streaming: bool = True
    stream_usage: bool = True
    n_choices: bool = True
    deterministic: bool = True
    error_shape: ErrorShape = "openai"
    context_window: int | None = None


PRESETS: dict[str, Profile] = {
    "strict-openai": Profile(),
    # llmock 0.2.2: no logprobs, max_tokens and parameter checks ignored, one tool call at a time.
    "llmock": Profile(logprobs=False, max_tokens=False, strict_validation=False, parallel_tool_calls=False),
    # miles' session server: logprobs forced on, fake single-chunk streaming, `{"error": "<string>"}` errors,
    # validation left to the backend behind it.
    "miles-session": Profile(strict_validation=False, parallel_tool_calls=False, error_shape="miles"),
    # vLLM's OpenAI server: logprobs (top_logprobs up to its max_logprobs, 20), n > 1, seed, tools (auto
    # choice only when served with --enable-auto-tool-choice and a parser), include_usage. Sampling
    # parameters are checked only where vLLM needs them (a temperature above 2 is served), and its
    # documentation says online serving is not reproducible without GPU-only batch invariance.
    "vllm": Profile(strict_validation=False, deterministic=False),
    # The LiteLLM proxy forwards each request to the model behind it: what it offers is that model's
    # (this profile: an OpenAI-like one); it validates no parameter itself, and its seed reaches a
    # backend that may not honour it.
    "litellm": Profile(strict_validation=False, deterministic=False),
    # llama-cpp-python's server (0.3.36): logprobs, as its server loads models with logits_all on by
    # default (the Llama class alone has it off); a tool named in tool_choice is called through a grammar
    # from its schema with any chat format, but "required" and "auto" only with a function-calling one,
    # so one call at a time; n ignored ("ignored or currently unsupported" in its request type), no
    # stream_options, no bound on temperature or top_logprobs; one model behind a lock, so a seeded
    # temperature-0 request repeats.
    "llama-cpp": Profile(
        strict_validation=False,
        parallel_tool_calls=False,
        stream_usage=False,
        n_choices=False,
    ),
}


class OpenAIChatOptions(SuiteOptions, HttpOptions):
    model: str | None = pydantic.Field(
        None, description="Model id sent in every request. Default: the first id GET /models lists."
    )
    preset: ChatPreset = pydantic.Field(
        "strict-openai", description="Capability profile to start from; the fields below override it."
    )
    logprobs: Offered = pydantic.Field("preset", description="The target returns logprobs when asked.")
    max_tokens: Offered = pydantic.Field(
        "preset", description="The target honours max_tokens (stops there with finish_reason length)."
    )
    strict_validation: Offered = pydantic.Field(
        "preset", description="The target refuses invalid parameters (a bad role, temperature 5...) with a 4xx."
    )
    tools: Offered = pydantic.Field("preset", description="The target calls tools it is offered.")
    parallel_tool_calls: Offered = pydantic.Field(
        "preset", description="The target makes several tool calls in one reply when the prompt needs them."
    )
    streaming: Offered = pydantic.Field("preset", description="The target streams (stream: true) as SSE.")
    stream_usage: Offered = pydantic.Field(
        "preset", description="A stream with stream_options.include_usage ends with a usage chunk."
    )
    n_choices: Offered = pydantic.Field("preset", description="The target gives n choices when n > 1 is asked.")
    deterministic: Offered = pydantic.Field(
        "preset", description="Temperature 0 with a seed gives the same reply every time."
    )
    error_shape: Literal["preset", "openai", "miles"] = pydantic.Field(
        "preset",
        description='Error bodies: the OpenAI object {"error": {"message", "type", ...}}, or miles\' '
        '{"error": "<string>"} (either is accepted then).',
    )
    context_window: int | None = pydantic.Field(
        None, ge=16, le=10_000_000, description="The model's context window in tokens; enables the overflow check."
    )
    concurrency: int = pydantic.Field(8, ge=2, le=64, description="Parallel requests in the concurrency phase.")
    repeats: int = pydantic.Field(3, ge=2, le=20, description="Identical requests sent to judge determinism.")
    max_tokens_cap: int = pydantic.Field(
        64, ge=8, le=4096, description="max_tokens sent with ordinary requests, to keep real models quick."
    )

    @pydantic.field_validator(*OFFERED_FIELDS, mode="before")
    @classmethod
    def _booleans(cls, value: Any) -> Any:
        """`--option logprobs=false` reads as "no"."""
        return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value

    def profile(self) -> Profile:
        base = PRESETS[self.preset]
        changes: dict[str, Any] = {}
        for name in OFFERED_FIELDS:
            value = getattr(self, name)
            if value != "preset":
                changes[name] = value == "yes"
        if self.error_shape != "preset":
            changes["error_shape"] = self.error_shape
        if self.context_window is not None:
            changes["context_window"] = self.context_window
        return replace(base, **changes)


@dataclass
class OpenAIState:
    """What one run has learned about its target, shared by its phases."""

    model: str | None = None
    echoes: bool | None = None  # the target repeats a code the prompt asks it to repeat
    notes: list[str] = field(default_factory=list)


Ctx = PhaseContext[OpenAIChatOptions, OpenAIState]
