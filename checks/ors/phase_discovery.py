"""HTTP API > Discovery: health, environments, tools, splits, tasks and the index API."""

from __future__ import annotations

from checks.decision import info, record
from checks.http_client import Reply
from checks.ors.judging import (
    env_names,
    judge_health,
    judge_index_api,
    judge_invalid_split,
    judge_list_envs,
    judge_names_usable,
    judge_out_of_range,
    judge_splits,
    judge_tasks,
    judge_tasks_by_index,
    judge_tools,
    judge_unknown_env,
    note_unknown_keys,
    note_version,
    task_count,
)
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn
from checks.task_index import RANGE_PROBED, IndexProbe, index_probes, listed_tasks

DISCOVERY_CLAUSES = (
    "ors.health.ok",
    "ors.discovery.list-envs",
    "ors.discovery.env-name-usable",
    "ors.discovery.unknown-env",
    "ors.tools.shape",
    "ors.splits.shape",
    "ors.tasks.shape",
    "ors.tasks.invalid-split",
    "ors.tasks.index-api-consistent",
    "ors.tasks.index-out-of-range",
    "ors.version.none",
    "ors.body.unknown-keys",
)
NAMES_PROBED = 8  # listed env names whose routes are tried


async def discovery_phase(ctx: Ctx) -> None:
    async with client(ctx, "discovery") as http:
        record(ctx.report, judge_health(await http.get("/health")), http.transcript)
        listed = await http.get("/list_environments")
        record(ctx.report, judge_list_envs(listed), http.transcript)
        names = env_names(listed)[:NAMES_PROBED]
        usable = {
            f"/{name}/{route}": await http.get(f"/{name}/{route}") for name in names for route in ("tools", "splits")
        }
        record(ctx.report, judge_names_usable(names, usable), http.transcript)
        await learn(ctx, http)
        decisions = [
            judge_unknown_env(await http.get("/zz-unknown-env/tools")),
            judge_tools(await http.get(f"/{http.env}/tools")),
            judge_splits(await http.get(f"/{http.env}/splits")),
        ]
        record(ctx.report, decisions, http.transcript)
        await _tasks(ctx, http)
        record(ctx.report, note_version(await http.get("/version")), http.transcript)


async def _tasks(ctx: Ctx, http: OrsClient) -> None:
    split, env = ctx.state.split, http.env
    tasks = await http.post(f"/{env}/tasks", {"split": split})
    listed = listed_tasks(tasks)
    count = await http.post(f"/{env}/num_tasks", {"split": split}) if listed is None else None
    decisions = [
        judge_tasks(tasks, count),
        judge_invalid_split(await http.post(f"/{env}/tasks", {"split": "__no_such_split__"})),
        note_unknown_keys(await http.post(f"/{env}/tasks", {"split": split, "zz_unknown_key": 1})),
    ]
    record(ctx.report, decisions, http.transcript)
    if listed is not None:
        await _index_api(ctx, http, listed, "/tasks")
    elif count is not None:
        await _index_by_count(ctx, http, count)


async def _index_by_count(ctx: Ctx, http: OrsClient, count: Reply) -> None:
    """Without /tasks (an env may serve only the index API), task(i) one by one is the list to hold the rest to."""
    split, env = ctx.state.split, http.env
    total = task_count(count)
    if total is None:
        why = f"not judged: neither /tasks nor /num_tasks gave the split's tasks ({count.describe(80)})"
        record(ctx.report, info("ors.tasks.index-api-consistent", actual=why), http.transcript)
        return
    answers = [await http.post(f"/{env}/task", {"split": split, "index": i}) for i in range(min(total, RANGE_PROBED))]
    refused = judge_tasks_by_index(count, answers)
    if refused is not None:
        record(ctx.report, refused, http.transcript)
    await _index_api(ctx, http, [_task_of(reply) for reply in answers], "task(i)", total)


def _task_of(reply: Reply) -> object:
    return reply.body.get("task") if isinstance(reply.body, dict) else None


async def _index_api(ctx: Ctx, http: OrsClient, listed: list[object], source: str, total: int | None = None) -> None:
    """The index API against `listed` (the first tasks of the split; all of them unless `total` says more)."""
    split, env = ctx.state.split or "", http.env
    count = len(listed) if total is None else total
    probes = [probe for probe in index_probes(split, listed) if total is None or probe.route == "task_range"]
    if total is None and count > 1:  # a range that does not start at 0
        probes.append(
            IndexProbe(
                f"task_range(1, {count})",
                "task_range",
                {"split": split, "start": 1, "stop": count},
                "tasks",
                listed[1:],
            )
        )
    answers = [await http.post(f"/{env}/{probe.route}", probe.body) for probe in probes]
    beyond = await http.post(f"/{env}/task", {"split": split, "index": count})
    record(ctx.report, [judge_index_api(probes, answers, source), judge_out_of_range(beyond)], http.transcript)
