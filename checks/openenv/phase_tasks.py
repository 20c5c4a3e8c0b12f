"""The task API of OpenEnv 0.10, detected and never assumed: its routes agree, and a listed task resets.

A server without /list_environments predates the API (openenv-core 0.3) and a
501 means the env implements no task methods: both are unsupported, not
failed. Choosing a task is reset data (`split`, `index`), so a task the API
lists must reset over /ws.
"""

from __future__ import annotations

from typing import Any

from checks.core import summarize
from checks.http_client import HttpClient, Reply
from checks.openenv.episodes import finish
from checks.openenv.options import Ctx
from checks.openenv.session import open_session

NOT_SERVED = (404, 405)
NOT_IMPLEMENTED = 501
TASK_CLAUSES = ("openenv.tasks.consistent", "openenv.tasks.reset")


async def tasks_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with HttpClient(ctx.url, report.transcript("task API"), ctx.timeout, ctx.options) as http:
        listed = await http.get("/list_environments")
        if listed.status in NOT_SERVED:
            _unsupported(ctx, http, f"/list_environments answers {listed.status}: no task API (OpenEnv 0.10)")
            return
        names = listed.body if listed.is_json else None
        if not isinstance(names, list) or not names or not isinstance(names[0], str):
            report.failed(
                "openenv.tasks.consistent",
                expected="/list_environments answers a list of env names",
                actual=listed.describe(),
                evidence=http.transcript,
            )
            return
        env = names[0]
        splits = await http.get(f"/{env}/splits")
        if splits.status == NOT_IMPLEMENTED:
            _unsupported(ctx, http, f"/{env}/splits answers 501: the env implements no task methods")
            return
        split = _first_split(splits)
        if split is None:
            report.failed(
                "openenv.tasks.consistent",
                expected=f"/{env}/splits answers a list of splits",
                actual=splits.describe(),
                evidence=http.transcript,
            )
            return
        tasks, problems = await _listing(http, env, split)
        report.check(
            not problems,
            "openenv.tasks.consistent",
            expected=f"num_tasks, tasks, task and task_range of split {split!r} agree",
            actual="; ".join(problems) or f"{len(tasks)} tasks in split {split!r}, each route agreeing",
            evidence=http.transcript,
        )
    if not tasks:
        report.unsupported("openenv.tasks.reset", f"split {split!r} lists no task", http.transcript)
        return
    await _reset_to_task(ctx, split)


def _unsupported(ctx: Ctx, http: HttpClient, why: str) -> None:
    for clause_id in TASK_CLAUSES:
        ctx.report.unsupported(clause_id, why, http.transcript)


def _first_split(reply: Reply) -> str | None:
    body = reply.body if reply.status == 200 and reply.is_json else None
    if not isinstance(body, list) or not body:
        return None
    first = body[0]
    name = first.get("name") if isinstance(first, dict) else first
    return name if isinstance(name, str) else None


async def _listing(http: HttpClient, env: str, split: str) -> tuple[list[Any], list[str]]:
    """The split's tasks, and where the four routes disagree (a 5xx is a disagreement too)."""
    count = await http.post(f"/{env}/num_tasks", {"split": split})
    listing = await http.post(f"/{env}/tasks", {"split": split})
    number = count.body.get("num_tasks") if count.is_json and isinstance(count.body, dict) else None
    tasks = listing.body.get("tasks") if listing.is_json and isinstance(listing.body, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or not isinstance(tasks, list):
        return [], [f"num_tasks {count.describe(120)}, tasks {listing.describe(120)}"]
    problems = [] if number == len(tasks) else [f"num_tasks says {number}, tasks lists {len(tasks)}"]
    if tasks:
        first = await http.post(f"/{env}/task", {"split": split, "index": 0})
        task = first.body.get("task") if first.is_json and isinstance(first.body, dict) else None
        if task != tasks[0]:
            problems.append(f"task 0 is {first.describe(120)}, tasks[0] is {summarize(tasks[0], 120)}")
        stop = min(2, len(tasks))
        ranged = await http.post(f"/{env}/task_range", {"split": split, "start": 0, "stop": stop})
        shown = ranged.body.get("tasks") if ranged.is_json and isinstance(ranged.body, dict) else None
        if shown != tasks[:stop]:
            problems.append(f"task_range 0..{stop} is {ranged.describe(120)}")
    return tasks, problems


async def _reset_to_task(ctx: Ctx, split: str) -> None:
    ws = await open_session(ctx, f"reset to task 0 of split {split!r}")
    try:
        reply = await ws.reset({**ctx.options.reset, "split": split, "index": 0})
        ctx.report.check(
            reply.kind == "observation",
            "openenv.tasks.reset",
            expected=f"an observation for a reset to task 0 of split {split!r}",
            actual=reply.describe(),
            evidence=ws.transcript,
        )
    finally:
        await finish(ws, ctx.timeout)
