"""The requests the suite sends: prompts that need what they test, the tools it offers, nonces."""

from __future__ import annotations

import secrets
from typing import Any

SEED = 20260803
UNICODE_TEXT = "Grüße, naïve café — 你好，世界 🌍🚀"

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of one city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current local time in one IANA timezone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string"}},
            "required": ["timezone"],
        },
    },
}
TOOLS = [WEATHER_TOOL, TIME_TOOL]
FORCE_WEATHER = {"type": "function", "function": {"name": "get_weather"}}


def nonce() -> str:
    return f"n{secrets.token_hex(5)}"


def repeat_prompt(code: str) -> str:
    return f"Repeat this code exactly, and nothing else: {code}"


def chat_body(model: str, text: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
    """A one-message chat at temperature 0 with the suite's seed."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": text}],
        "temperature": 0,
        "seed": SEED,
        "max_tokens": max_tokens,
    }
    body.update(extra)
    return body


def single_tool_body(model: str, max_tokens: int) -> dict[str, Any]:
    return chat_body(
        model,
        'Use the get_weather tool to look up the weather in "Paris". Call the tool; do not answer in text.',
        max_tokens,
        tools=TOOLS,
        tool_choice=FORCE_WEATHER,
    )


def parallel_tool_body(model: str, max_tokens: int) -> dict[str, Any]:
    return chat_body(
        model,
        'Call get_weather once for each of these cities, in parallel, in this order: "Paris", "Tokyo". '
        "Call the tools; do not answer in text.",
        max_tokens,
        tools=[WEATHER_TOOL],
        tool_choice="required",
        parallel_tool_calls=True,
    )


def long_prompt_words(tokens: int) -> str:
    """Text of at least `tokens` tokens for any tokenizer: one short word a token, capped at 4 MB."""
    count = min(tokens, 1_000_000)
    return "Summarize: " + "go " * count
