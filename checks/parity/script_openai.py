"""The openai-chat parity script: temperature 0 and a seed give the same content, tool calls and logprobs.

N requests, each a distinct fixed prompt (every other one offering a weather
tool), are sent one after another at temperature 0 with a fixed seed and
logprobs on. Per request the status, each choice's content, tool calls and
finish reason, the token logprobs and the usage are recorded. The divergence
rate is over requests; any divergence fails unless `allowed_rate` allows it.
"""

from __future__ import annotations

from typing import Any

import pydantic

from checks.core import Report
from checks.http_client import Reply
from checks.http_options import HttpOptions
from checks.openai.facts import ChatClient
from checks.openai.requests import SEED
from checks.parity.projections import Projection
from checks.parity.script import Observed, ParityOptions
from checks.session.agent import WEATHER_TOOL

CITIES = ("Beijing", "Shanghai", "Lisbon", "Nairobi", "Quito", "Oslo", "Perth", "Lima")


class OpenAIParityOptions(ParityOptions, HttpOptions):
    requests: int = pydantic.Field(8, ge=1, le=1000, description="Requests sent (N); the rate is over them.")
    model: str | None = pydantic.Field(None, description="Model id. Default: the first id GET /models lists.")
    max_tokens: int = pydantic.Field(32, ge=1, le=4096, description="max_tokens of every request.")
    logprobs: bool = pydantic.Field(True, description="Ask for logprobs (top 2) and compare them.")
    allowed_rate: float = pydantic.Field(
        0.0, ge=0, le=1, description="Share of requests that may diverge before the run fails (default none)."
    )


def request_body(index: int, options: OpenAIParityOptions, model: str | None) -> dict[str, Any]:
    city = CITIES[index % len(CITIES)]
    body: dict[str, Any] = {
        "messages": [{"role": "user", "content": f"Request {index}: what is the weather in {city}?"}],
        "temperature": 0,
        "seed": SEED,
        "max_tokens": options.max_tokens,
    }
    if model is not None:
        body["model"] = model
    if options.logprobs:
        body.update(logprobs=True, top_logprobs=2)
    if index % 2:
        body["tools"] = [WEATHER_TOOL]
    return body


def observed(reply: Reply) -> dict[str, Any]:
    body = reply.body if isinstance(reply.body, dict) else None
    if reply.status != 200 or body is None:
        return {"status": reply.status, "body": body if body is not None else reply.text[:2000]}
    listed = body.get("choices")
    choices: list[Any] = listed if isinstance(listed, list) else []
    return {
        "status": reply.status,
        "choices": [
            {
                "message": {k: (c.get("message") or {}).get(k) for k in ("role", "content", "tool_calls")},
                "finish_reason": c.get("finish_reason"),
                "logprobs": c.get("logprobs"),
            }
            for c in choices
            if isinstance(c, dict)
        ],
        "usage": body.get("usage"),
    }


class OpenAIScript:
    kind = "openai-chat"
    version = "1"
    options_model = OpenAIParityOptions
    unit = "requests"
    leading: tuple[str, ...] = ()
    projections = (Projection("requests[*].choices[*].message.tool_calls[*].id", "identity", "tool-call"),)

    def inputs(self, options: OpenAIParityOptions) -> dict[str, Any]:
        return options.model_dump(include={"requests", "model", "max_tokens", "logprobs"})

    def allowed_rate(self, options: OpenAIParityOptions) -> float:
        return options.allowed_rate

    async def observe(self, url: str, options: OpenAIParityOptions, report: Report) -> Observed:
        async with ChatClient(url, options, options.timeout, report.transcript("parity")) as client:
            model = options.model
            if model is None:
                listed = await client.get("/models")
                data = listed.body.get("data") if isinstance(listed.body, dict) else None
                if isinstance(data, list) and data and isinstance(data[0], dict):
                    model = str(data[0].get("id"))
            replies = [observed(await client.chat(request_body(i, options, model))) for i in range(options.requests)]
        return Observed({"model": model, "requests": replies}, summary=f"{len(replies)} requests")


SCRIPT = OpenAIScript()
