"""HTTP API > Discovery: health, environments, tools, splits, tasks and the index API."""

from __future__ import annotations

from checks.decision import info, missed, passed, record
from checks.ors.judging import refused, server_error, tasks_problem, tools_problem
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn
from checks.task_index import index_disagreements, index_probes, listed_tasks, splits_problem

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


async def discovery_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "discovery") as http:
        health = await http.get("/health")
        ok = health.status == 200 and isinstance(health.body, dict) and health.body.get("status") == "ok"
        report.check(
            ok, "ors.health.ok", expected='200 {"status": "ok"}', actual=health.describe(), evidence=http.transcript
        )
        listed = await http.get("/list_environments")
        names = listed.body if isinstance(listed.body, list) else None
        report.check(
            bool(names) and all(isinstance(n, str) for n in names or []),
            "ors.discovery.list-envs",
            expected="a non-empty JSON array of strings",
            actual=listed.describe(),
            evidence=http.transcript,
        )
        await _names_usable(ctx, http, [n for n in names or [] if isinstance(n, str)])
        await learn(ctx, http)
        unknown = await http.get("/zz-unknown-env/tools")
        report.check(
            unknown.status == 404 or 300 <= unknown.status < 400,
            "ors.discovery.unknown-env",
            expected="404, or a redirect",
            actual=unknown.describe(),
            evidence=http.transcript,
        )
        tools = await http.get(f"/{http.env}/tools")
        problem = tools_problem(tools.body) if tools.status == 200 else tools.describe()
        report.check(
            not problem,
            "ors.tools.shape",
            expected="ToolSpecs",
            actual=problem or "well formed",
            evidence=http.transcript,
        )
        splits = await http.get(f"/{http.env}/splits")
        problem = splits_problem(splits.body) if splits.status == 200 else splits.describe()
        report.check(
            not problem,
            "ors.splits.shape",
            expected="[{name, type}]",
            actual=problem or "well formed",
            evidence=http.transcript,
        )
        await _tasks(ctx, http)
        version = await http.get("/version")
        report.info("ors.version.none", actual=version.describe(), evidence=http.transcript)


async def _names_usable(ctx: Ctx, http: OrsClient, names: list[str]) -> None:
    wrong = []
    for name in names[:8]:
        for route in ("tools", "splits"):
            reply = await http.get(f"/{name}/{route}")
            if reply.status != 200:
                wrong.append(f"/{name}/{route}: {reply.describe(60)}")
    ctx.report.check(
        not wrong and bool(names),
        "ors.discovery.env-name-usable",
        expected="200 for /{env}/tools and /{env}/splits of every listed name",
        actual="; ".join(wrong) or (f"{len(names)} names usable" if names else "no names listed"),
        evidence=http.transcript,
    )


async def _tasks(ctx: Ctx, http: OrsClient) -> None:
    report, split, env = ctx.report, ctx.state.split, http.env
    tasks = await http.post(f"/{env}/tasks", {"split": split})
    problem = tasks_problem(tasks.body) if tasks.status == 200 else tasks.describe()
    report.check(
        not problem,
        "ors.tasks.shape",
        expected='{"tasks": [...], "env_name": str}',
        actual=problem or "well formed",
        evidence=http.transcript,
    )
    bad = await http.post(f"/{env}/tasks", {"split": "__no_such_split__"})
    report.check(
        refused(bad),
        "ors.tasks.invalid-split",
        expected="a 4xx (400 in the spec)",
        actual=bad.describe(),
        evidence=http.transcript,
    )
    junk = await http.post(f"/{env}/tasks", {"split": split, "zz_unknown_key": 1})
    report.info(
        "ors.body.unknown-keys", actual=f"/tasks with an unknown key: {junk.describe(80)}", evidence=http.transcript
    )
    listed = listed_tasks(tasks)
    if listed is None:
        decisions = [info("ors.tasks.index-api-consistent", actual="not judged: no task list to compare with")]
        record(report, decisions, http.transcript)
        return
    await _index_api(ctx, http, listed)


async def _index_api(ctx: Ctx, http: OrsClient, listed: list[object]) -> None:
    split, env = ctx.state.split or "", http.env
    probes = index_probes(split, listed)
    answers = [await http.post(f"/{env}/{probe.route}", probe.body) for probe in probes]
    wrong = index_disagreements(probes, answers)
    decision = (
        missed("ors.tasks.index-api-consistent", expected="the index API agrees with /tasks", actual="; ".join(wrong))
        if wrong
        else passed("ors.tasks.index-api-consistent", actual=f"{len(listed)} tasks agree")
    )
    beyond = await http.post(f"/{env}/task", {"split": split, "index": len(listed)})
    out_of_range = (
        passed("ors.tasks.index-out-of-range", actual=beyond.describe(80))
        if refused(beyond)
        else missed("ors.tasks.index-out-of-range", expected="a 4xx", actual=beyond.describe(80))
    )
    if server_error(beyond):
        out_of_range = missed("ors.tasks.index-out-of-range", expected="a 4xx, not a 5xx", actual=beyond.describe(80))
    record(ctx.report, [decision, out_of_range], http.transcript)
