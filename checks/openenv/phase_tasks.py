"""The task API of OpenEnv 0.10, detected and never assumed: its routes agree, and a listed task resets.

A server without /list_environments predates the API (openenv-core 0.3) and a
501 means the env implements no task methods: both are unsupported, not
failed. Choosing a task is reset data (`split`, `index`), so a task the API
lists must reset over /ws. The splits and index rules are ORS's (`checks.task_index`),
with the differences that module names.
"""

from __future__ import annotations

from typing import Any

from checks.decision import record, unsupported
from checks.http_client import HttpClient
from checks.openenv import http_judging
from checks.openenv import judging_sessions as judge
from checks.openenv.episodes import finish
from checks.openenv.options import Ctx
from checks.openenv.session import open_session
from checks.task_index import first_split, index_disagreements, index_probes, listed_tasks

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
        env = http_judging.env_name(listed)
        if env is None:
            record(report, http_judging.env_names(listed), http.transcript)
            return
        splits = await http.get(f"/{env}/splits")
        if splits.status == NOT_IMPLEMENTED:
            _unsupported(ctx, http, f"/{env}/splits answers 501: the env implements no task methods")
            return
        split = first_split(splits.body)
        if http_judging.splits_problem_of(splits) or split is None:
            record(report, http_judging.splits(env, splits), http.transcript)
            return
        tasks, problems = await _listing(http, env, split)
        record(report, http_judging.task_index(split, tasks, problems), http.transcript)
    if not tasks:
        record(report, unsupported("openenv.tasks.reset", f"split {split!r} lists no task"), http.transcript)
        return
    await _reset_to_task(ctx, split)


def _unsupported(ctx: Ctx, http: HttpClient, why: str) -> None:
    record(ctx.report, [unsupported(clause_id, why) for clause_id in TASK_CLAUSES], http.transcript)


async def _listing(http: HttpClient, env: str, split: str) -> tuple[list[Any], list[str]]:
    """The split's tasks, and where the index API disagrees with them (the rule ORS's suite judges with)."""
    listing = await http.post(f"/{env}/tasks", {"split": split})
    tasks = listed_tasks(listing)
    if tasks is None:
        return [], [f"tasks {listing.describe(120)}"]
    probes = index_probes(split, tasks)
    answers = [await http.post(f"/{env}/{probe.route}", probe.body) for probe in probes]
    return tasks, index_disagreements(probes, answers)


async def _reset_to_task(ctx: Ctx, split: str) -> None:
    ws = await open_session(ctx, f"reset to task 0 of split {split!r}")
    try:
        reply = await ws.reset({**ctx.options.reset, "split": split, "index": 0})
        record(ctx.report, judge.task_reset(reply, split), ws.transcript)
    finally:
        await finish(ws, ctx.timeout)
