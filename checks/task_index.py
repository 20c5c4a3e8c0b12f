"""The task-index rules ORS and OpenEnv 0.10's task API share: the splits list, and the index API against /tasks.

OpenEnv 0.10 serves ORS's shapes for /{env}/splits, /tasks, /num_tasks, /task
and /task_range, so both suites judge them with these pure rules. Where the
two differ the caller says so, or the rule stays with its kind:
- ORS types every split train, validation or test; OpenEnv passes an env's own
  split objects through untouched, so it judges with `types=None`.
- OpenEnv's /task and /task_range answers carry no env_name (ors-sdk's carry
  none either), so no rule here asks for one; the /tasks env_name is ORS's
  `tasks.shape` alone.
- An unknown split is refused with a 4xx on ORS but is whatever the env raises
  on OpenEnv (a 500 for a KeyError), so nothing here probes one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checks.evidence import summarize
from checks.http_client import Reply

SPLIT_TYPES = ("train", "validation", "test")
RANGE_PROBED = 3  # task_range(0, n) is probed with n = this many tasks at most


def splits_problem(body: Any, *, types: tuple[str, ...] | None = SPLIT_TYPES) -> str:
    """Why `body` is not a non-empty array of {name, type} ("" when it is); `types=None` takes any type."""
    if not isinstance(body, list) or not body:
        return f"not a non-empty array: {summarize(body, 120)}"
    for split in body:
        if not isinstance(split, dict) or not isinstance(split.get("name"), str):
            return f"a split without a string name: {summarize(split, 80)}"
        if types is not None and split.get("type") not in types:
            return f"split {split['name']!r} has type {summarize(split.get('type'), 40)}"
    return ""


def first_split(body: Any) -> str | None:
    """The name of the first split object in a /splits answer, or None."""
    listed = body if isinstance(body, list) else []
    name = next((split.get("name") for split in listed if isinstance(split, dict)), None)
    return name if isinstance(name, str) else None


def listed_tasks(reply: Reply) -> list[Any] | None:
    """The "tasks" array of a 200 /tasks answer, or None."""
    tasks = reply.body.get("tasks") if reply.status == 200 and isinstance(reply.body, dict) else None
    return tasks if isinstance(tasks, list) else None


@dataclass(frozen=True)
class IndexProbe:
    """One index-API request and what /tasks says its answer holds under `key`."""

    label: str
    route: str  # num_tasks, task or task_range, under /{env}/
    body: dict[str, Any]
    key: str
    want: Any


def index_probes(split: str, listed: list[Any]) -> list[IndexProbe]:
    """num_tasks, task 0 and the last task (when there are any), and task_range(0, up to three) of a split."""
    probes = [IndexProbe("num_tasks", "num_tasks", {"split": split}, "num_tasks", len(listed))]
    if listed:
        last = len(listed) - 1
        probes.append(IndexProbe("task(0)", "task", {"split": split, "index": 0}, "task", listed[0]))
        if last:
            probes.append(IndexProbe(f"task({last})", "task", {"split": split, "index": last}, "task", listed[last]))
    stop = min(len(listed), RANGE_PROBED)
    ranged = {"split": split, "start": 0, "stop": stop}
    probes.append(IndexProbe(f"task_range(0, {stop})", "task_range", ranged, "tasks", listed[:stop]))
    return probes


def index_disagreements(probes: list[IndexProbe], answers: list[Reply]) -> list[str]:
    """Where the index API's answers differ from /tasks; a non-200 answer (a 5xx too) is a difference."""
    wrong = []
    for probe, reply in zip(probes, answers, strict=True):
        got = reply.body.get(probe.key) if reply.status == 200 and isinstance(reply.body, dict) else None
        # A JSON true equals 1 in Python; a count or a task is not a boolean where /tasks has a number.
        same = reply.status == 200 and got == probe.want and isinstance(got, bool) == isinstance(probe.want, bool)
        if not same:
            shown = summarize(got, 80) if reply.status == 200 and isinstance(reply.body, dict) else reply.describe(80)
            wrong.append(f"{probe.label}: {shown} (tasks says {summarize(probe.want, 80)})")
    return wrong
