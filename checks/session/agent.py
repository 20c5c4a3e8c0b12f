"""A scripted weather agent driving one session through the retry schedule of miles' v1/v2 parity test.

The schedule: initial, append_tool, append_user, append_tool, append_system,
rollback, rollback, force_final, append_assistant. Nine chat calls; a
conforming server keeps seven records on the active path, and a v2 tree of
nodes (0,-)(1,0)(2,1)(3,2)(4,3)(5,3)(6,3)(7,6)(8,7) with leaves 4, 5 and 8.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from checks.http_client import Reply
from checks.session.routes import SessionClient
from checks.session.stream import assembled_completion

SCHEDULE = (
    "initial",
    "append_tool",
    "append_user",
    "append_tool",
    "append_system",
    "rollback",
    "rollback",
    "force_final",
    "append_assistant",
)
EXPECTED_RECORDS = 7
EXPECTED_TREE = [(0, None), (1, 0), (2, 1), (3, 2), (4, 3), (5, 3), (6, 3), (7, 6), (8, 7)]
EXPECTED_LEAVES = [(4, [0, 1, 2, 3, 4]), (5, [0, 1, 2, 3, 5]), (8, [0, 1, 2, 3, 6, 7, 8])]
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather at a location.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    },
}
FORECASTS = {"Beijing": "sunny, 25C", "Shanghai": "light rain, 19C"}


@dataclass
class Step:
    event: str
    request: dict[str, Any]
    reply: Reply
    snapshot: Reply  # GET /sessions/{id} right after the call


@dataclass
class ScheduleRun:
    steps: list[Step] = field(default_factory=list)

    def failed_step(self) -> Step | None:
        return next((s for s in self.steps if s.reply.status != 200 or not isinstance(s.reply.body, dict)), None)


def echo(reply: Reply) -> dict[str, Any]:
    """The assistant message an agent appends to its history: the reply's message, content never null."""
    message = dict(reply.body["choices"][0]["message"])
    message = {k: message[k] for k in ("role", "content", "tool_calls") if message.get(k) is not None}
    message.setdefault("content", "")
    return message


def tool_results(message: dict[str, Any]) -> list[dict[str, Any]]:
    results = []
    for call in message.get("tool_calls") or []:
        try:
            location = json.loads(call["function"]["arguments"]).get("location")
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError):
            location = None
        forecast = FORECASTS.get(str(location), "unknown")
        results.append({"role": "tool", "tool_call_id": call.get("id"), "content": f"{location}: {forecast}"})
    return results


async def run_schedule(
    client: SessionClient,
    sid: str,
    base: dict[str, Any],
    events: tuple[str, ...] = SCHEDULE,
    streamed: tuple[str, ...] = (),
) -> ScheduleRun:
    """Drive `events` of the schedule, streaming those in `streamed` (their reply body is the assembled stream).

    Stops at the first call that is not a 200 reply with a body (the caller judges it).
    """
    run = ScheduleRun()
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": "What is the weather in Beijing?"},
    ]
    last_request: list[dict[str, Any]] = []
    retries = 0
    for event in events:
        if event == "append_tool":
            history += tool_results(history[-1])
        elif event == "append_user":
            history.append({"role": "user", "content": "And the weather in Shanghai?"})
        elif event == "append_system":
            history.append({"role": "system", "content": "Answer in one short sentence."})
        elif event == "rollback":
            retries += 1
            history = [
                *last_request[:-1],
                {**last_request[-1], "content": f"{last_request[-1]['content']} (retry {retries})"},
            ]
        elif event == "force_final":
            history.append({"role": "user", "content": "Give your final answer now."})
        elif event == "append_assistant":
            history += [
                {"role": "assistant", "content": "Summary: Beijing is sunny, Shanghai has light rain."},
                {"role": "user", "content": "Thanks. Anything to add?"},
            ]
        request = {**base, "messages": list(history), "tools": [WEATHER_TOOL]}
        if event in streamed:
            request["stream"] = True
        reply = await client.chat(sid, request)
        if event in streamed and reply.status == 200 and reply.content_type.startswith("text/event-stream"):
            reply.body, reply.is_json = assembled_completion(reply.raw), True
        snapshot = await client.get(sid)
        run.steps.append(Step(event, request, reply, snapshot))
        if reply.status != 200 or not isinstance(reply.body, dict):
            break
        last_request = list(history)
        history.append(echo(reply))
    return run
