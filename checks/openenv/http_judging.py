"""Pure judgements of OpenEnv's HTTP answers (discovery, and /reset and /step in simulation mode).

Each reads one recorded `checks.http_client.Reply` and returns a Decision; the discovery and HTTP
phases record them, and the tap judges the same answers in a copy of live traffic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checks.decision import Decision, check
from checks.http_client import Reply

SIMULATION_PATHS = ("/reset", "/step", "/state")
SCHEMA_KEYS = ("action", "observation", "state")


def usable_schema(body: Any) -> dict[str, Any] | None:
    if isinstance(body, dict) and all(isinstance(body.get(key), dict) for key in SCHEMA_KEYS):
        return body
    return None


def health(reply: Reply) -> Decision:
    body = reply.body
    return check(
        reply.status == 200 and isinstance(body, dict) and body.get("status") == "healthy",
        "openenv.discover.health",
        expected='200 {"status": "healthy"}',
        actual=reply.describe(),
    )


def metadata(reply: Reply) -> Decision:
    body = reply.body if isinstance(reply.body, dict) else {}
    return check(
        reply.status == 200 and isinstance(body.get("name"), str) and isinstance(body.get("description"), str),
        "openenv.discover.metadata",
        expected="200 with string name and description",
        actual=reply.describe(),
    )


def schema(reply: Reply) -> Decision:
    return check(
        reply.status == 200 and usable_schema(reply.body) is not None,
        "openenv.discover.schema",
        expected="200 with object action, observation and state schemas",
        actual=reply.describe(),
    )


def openapi_version(reply: Reply) -> str | None:
    document = reply.body if isinstance(reply.body, dict) else {}
    info = document.get("info")
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) else None


def openapi(reply: Reply) -> Decision:
    return check(
        reply.status == 200 and openapi_version(reply) is not None,
        "openenv.discover.openapi",
        expected="200 with a string info.version",
        actual=reply.describe(),
    )


def openapi_paths(reply: Reply) -> set[str] | None:
    paths = reply.body.get("paths") if reply.status == 200 and isinstance(reply.body, dict) else None
    return set(paths) if isinstance(paths, dict) else None


def mode_name(paths: Iterable[str]) -> str:
    """The mode the listed paths show: simulation (all of /reset, /step, /state), production (none), or mixed."""
    listed = set(paths)
    present = [path for path in SIMULATION_PATHS if path in listed]
    return "simulation" if len(present) == 3 else "production" if not present else "mixed"


def mode(paths: Iterable[str]) -> Decision:
    """openenv.mode.consistent: all of /reset, /step and /state listed, or none."""
    listed = set(paths)
    present = [path for path in SIMULATION_PATHS if path in listed]
    named = mode_name(listed)
    return check(
        named != "mixed",
        "openenv.mode.consistent",
        expected="all or none of /reset, /step, /state",
        actual=f"{named} mode: {', '.join(present) or 'none'} listed",
    )


def result_problem(reply: Reply) -> str | None:
    """What keeps an HTTP /reset or /step answer from being 200 {observation, reward, done}."""
    if reply.status != 200 or not isinstance(reply.body, dict):
        return f"answered {reply.describe()}"
    if not isinstance(reply.body.get("observation"), dict):
        return "observation is not an object"
    if not isinstance(reply.body.get("done"), bool):
        return f"done is {reply.body.get('done')!r}, not a boolean"
    if "reward" not in reply.body:
        return "no reward key"
    return None


def result(clause_id: str, reply: Reply) -> Decision:
    """openenv.http.reset or openenv.http.step on one answer."""
    problem = result_problem(reply)
    return check(
        problem is None, clause_id, expected="200 {observation, reward, done}", actual=problem or reply.describe()
    )
