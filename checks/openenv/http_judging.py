"""Pure judgements of OpenEnv's HTTP answers (discovery, and /reset and /step in simulation mode).

Each reads one recorded `checks.http_client.Reply` and returns a Decision; the discovery and HTTP
phases record them, and the tap judges the same answers in a copy of live traffic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checks.decision import Decision, check, info
from checks.http_client import Reply
from checks.openenv.judging import http_metadata_problem
from checks.task_index import first_split, splits_problem

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


def profile(version: str | None, paths: set[str] | None, markers: list[str]) -> Decision:
    """openenv.discover.profile: the code line and mode the wire shows, recorded."""
    mode = "unknown" if paths is None else mode_name(paths)
    shown = f"openenv-http/{version.split('.')[0]}.x" if isinstance(version, str) and version else "unknown"
    line = "openenv 0.10 or later" if markers else "openenv-core 0.3 or earlier (no 0.10 marker)"
    return info(
        "openenv.discover.profile",
        actual=f"the wire shows {line}, {mode} mode; info.version {version!r} (profile {shown}); "
        f"0.10+ markers: {', '.join(markers) or 'none'}",
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


def invalid_action(reply: Reply, label: str) -> Decision:
    """openenv.http.invalid-action: POST /step with an action off /schema.action answers 422 with a detail list."""
    detail = reply.body.get("detail") if isinstance(reply.body, dict) else None
    return check(
        reply.status == 422 and isinstance(detail, list),
        "openenv.http.invalid-action",
        expected=f"422 with a detail list for {label}",
        actual=reply.describe(),
    )


def http_metadata(markers: list[str], answers: list[tuple[str, Reply]]) -> list[Decision]:
    """openenv.http.metadata: 0.10 always puts `metadata` at the top of an HTTP body; 0.3 never did,
    so only a wire showing 0.10 is judged."""
    if not markers:
        why = "not judged: the wire shows no openenv 0.10 marker (0.3 sends no top-level metadata)"
        return [info("openenv.http.metadata", actual=why)]
    decisions = []
    for route, reply in answers:
        problem = http_metadata_problem(reply.body) if reply.status == 200 else None
        decisions.append(
            check(
                problem is None,
                "openenv.http.metadata",
                expected=f"POST {route}: a top-level metadata key, null or the observation's metadata "
                f"(the wire shows {', '.join(markers)})",
                actual=problem or "metadata as 0.10 sends it",
            )
        )
    return decisions


def http_absent(replies: dict[str, Reply]) -> Decision:
    """openenv.production.http-absent: in production mode the simulation routes answer 404."""
    served = [f"{route}: {reply.describe()}" for route, reply in replies.items() if reply.status != 404]
    return check(
        not served,
        "openenv.production.http-absent",
        expected="404 for POST /reset, POST /step and GET /state (OpenAPI lists none of them)",
        actual="; ".join(served) or "404 for all three",
    )


def harness_refused(status: int | None, reason: str) -> Decision:
    """openenv.production.harness on a refused /harness handshake: a 4xx (openenv: 403)."""
    return check(
        status is not None and 400 <= status < 500,
        "openenv.production.harness",
        expected="the handshake refused with HTTP 403 (openenv), or another 4xx",
        actual=f"refused with HTTP {status}" if status is not None else f"no HTTP answer: {reason}",
    )


def env_name(listed: Reply) -> str | None:
    """The first env /list_environments names (None: it answers no list of names)."""
    names = listed.body if listed.is_json else None
    return names[0] if isinstance(names, list) and names and isinstance(names[0], str) else None


def env_names(listed: Reply) -> Decision:
    return check(
        env_name(listed) is not None,
        "openenv.tasks.consistent",
        expected="/list_environments answers a list of env names",
        actual=listed.describe(),
    )


def splits_problem_of(splits: Reply) -> str | None:
    return splits_problem(splits.body, types=None) if splits.status == 200 else splits.describe()


def splits(env: str, answer: Reply) -> Decision:
    """openenv.tasks.consistent on /{env}/splits: a list of splits with a first one."""
    problem = splits_problem_of(answer)
    return check(
        problem is None and first_split(answer.body) is not None,
        "openenv.tasks.consistent",
        expected=f"/{env}/splits answers a list of splits",
        actual=problem or answer.describe(),
    )


def task_index(split: str, tasks: list[Any], problems: list[str]) -> Decision:
    """openenv.tasks.consistent on the index routes of one split (the disagreements `checks.task_index` found)."""
    return check(
        not problems,
        "openenv.tasks.consistent",
        expected=f"num_tasks, tasks, task and task_range of split {split!r} agree",
        actual="; ".join(problems) or f"{len(tasks)} tasks in split {split!r}, each route agreeing",
    )
