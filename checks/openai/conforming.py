"""The conforming run of openai-chat: the reference endpoint, with an API key so the auth clauses are judged."""

from __future__ import annotations

from checks.conforming import ServerRun

API_KEY = "sk-reference"

RUNS = (
    ServerRun(
        name="reference",
        start="checks.openai.reference:start_reference_server",
        start_args={"api_key": API_KEY},
        # Short waits and few repeats; a context window and the key, so their clauses are decided.
        options={"timeout": 5.0, "concurrency": 4, "repeats": 2, "context_window": 4096, "api_key": API_KEY},
    ),
)
