"""HTTP API > Sessions; Sessions > 1-5: ids, /create, the session header, prompt, ping and delete."""

from __future__ import annotations

import uuid

from checks.decision import info, missed, passed, record
from checks.ors.judging import blocks_problem, refused, server_error, sid_of
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn

SESSIONS_CLAUSES = (
    "ors.session.create-session",
    "ors.session.create-session-form",
    "ors.session.create-session-unique",
    "ors.session.create",
    "ors.session.create-exactly-one-source",
    "ors.session.create-duplicate",
    "ors.session.client-minted-sid",
    "ors.session.id-header",
    "ors.session.unknown-sid",
    "ors.session.setup-blocking",
    "ors.prompt.blocks",
    "ors.ping.ok",
    "ors.delete.teardown",
    "ors.delete.idempotent",
    "ors.delete-session.ok",
)


async def sessions_phase(ctx: Ctx) -> None:
    report = ctx.report
    async with client(ctx, "sessions") as http:
        await learn(ctx, http)
        answers = [await http.create_session() for _ in range(ctx.options.creates)]
        ids = [sid_of(reply) for reply in answers]
        sids = [sid for sid, _ in ids if sid]
        report.check(
            len(sids) == len(ids),
            "ors.session.create-session",
            expected='JSON {"sid": str} or an SSE task_id event',
            actual=f"{len(sids)} of {len(ids)} answers carried an id; first: {answers[0].describe(100)}",
            evidence=http.transcript,
        )
        forms = sorted({form for sid, form in ids if sid})
        report.info(
            "ors.session.create-session-form",
            actual=f"answered as {' and '.join(forms) or 'neither'}",
            evidence=http.transcript,
        )
        report.check(
            len(set(sids)) == len(sids),
            "ors.session.create-session-unique",
            expected=f"{len(sids)} different ids",
            actual=f"{len(set(sids))} distinct of {len(sids)}",
            evidence=http.transcript,
        )
        sid = sids[0] if sids else str(uuid.uuid4())
        await _create(ctx, http, sid)
        await _header_and_unknown(ctx, http, sid)
        await _delete(ctx, http, sid)


async def _create(ctx: Ctx, http: OrsClient, sid: str) -> None:
    report, source = ctx.report, {"env_name": http.env, "split": ctx.state.split, "index": 0}
    created = await http.create(sid, source)
    echoed = isinstance(created.body, dict) and created.body.get("sid") == sid
    report.check(
        created.status == 200 and echoed,
        "ors.session.create",
        expected=f'200 {{"sid": "{sid}"}}',
        actual=created.describe(),
        evidence=http.transcript,
    )
    prompt = await http.prompt(sid)
    waiting = prompt.status == 503 and bool(prompt.header_values("retry-after"))
    report.check(
        prompt.status == 200 or waiting,
        "ors.session.setup-blocking",
        expected="200, or 503 with Retry-After",
        actual=prompt.describe(80),
        evidence=http.transcript,
    )
    problem = blocks_problem(prompt.body) if prompt.status == 200 else prompt.describe()
    report.check(
        not problem,
        "ors.prompt.blocks",
        expected="an array of text or image blocks",
        actual=problem or "well formed",
        evidence=http.transcript,
    )
    again = await http.create(sid, source)
    report.check(
        refused(again),
        "ors.session.create-duplicate",
        expected="a 4xx",
        actual=again.describe(),
        evidence=http.transcript,
    )
    both = await http.create(str(uuid.uuid4()), {**source, "task_spec": {"zz": 1}})
    neither = await http.create(str(uuid.uuid4()), {"env_name": http.env})
    report.check(
        refused(both) and refused(neither),
        "ors.session.create-exactly-one-source",
        expected="a 4xx for both task_spec and split+index, and for neither",
        actual=f"both: {both.describe(80)}; neither: {neither.describe(80)}",
        evidence=http.transcript,
    )
    minted = f"rlconform-{uuid.uuid4().hex}"
    own = await http.create(minted, source)
    report.info(
        "ors.session.client-minted-sid",
        actual=f"/create with an id this checker made: {own.describe(80)}",
        evidence=http.transcript,
    )
    if own.status == 200:
        await http.delete(minted)


async def _header_and_unknown(ctx: Ctx, http: OrsClient, sid: str) -> None:
    report = ctx.report
    body = {"name": next(iter(ctx.state.tools), "zz"), "input": {}}
    headless = {
        "/create": await http.create(None, {"env_name": http.env, "split": ctx.state.split, "index": 0}),
        "/prompt": await http.prompt(None),
        "/call": (await http.call(None, body))[0],
        "/ping": await http.ping(None),
        "/delete": await http.delete(None),
    }
    wrong = [f"{route}: {reply.describe(60)}" for route, reply in headless.items() if not refused(reply)]
    report.check(
        not wrong,
        "ors.session.id-header",
        expected="a 4xx on each route",
        actual="; ".join(wrong) or "all 4xx",
        evidence=http.transcript,
    )
    never = f"zz-never-created-{uuid.uuid4().hex}"
    unknown = {
        "/prompt": await http.prompt(never),
        "/ping": await http.ping(never),
        "/call": (await http.call(never, body))[0],
    }
    wrong = [f"{route}: {reply.describe(60)}" for route, reply in unknown.items() if not refused(reply)]
    report.check(
        not wrong,
        "ors.session.unknown-sid",
        expected="a 4xx on each route",
        actual="; ".join(wrong) or "all 4xx",
        evidence=http.transcript,
    )
    pong = await http.ping(sid)
    ok = pong.status == 200 and isinstance(pong.body, dict) and pong.body.get("status") == "ok"
    report.check(ok, "ors.ping.ok", expected='200 {"status": "ok"}', actual=pong.describe(), evidence=http.transcript)


async def _delete(ctx: Ctx, http: OrsClient, sid: str) -> None:
    deleted = await http.delete(sid)
    after = {"/prompt": await http.prompt(sid), "/ping": await http.ping(sid)}
    wrong = [f"{route}: {reply.describe(60)}" for route, reply in after.items() if not refused(reply)]
    teardown = (
        missed(
            "ors.delete.teardown",
            expected="a 4xx after /delete",
            actual=f"/delete {deleted.describe(60)}; " + "; ".join(wrong),
        )
        if wrong or deleted.status >= 300
        else passed("ors.delete.teardown", actual="prompt and ping refused after /delete")
    )
    twice, stranger = await http.delete(sid), await http.delete(f"zz-{uuid.uuid4().hex}")
    idempotent = (
        missed(
            "ors.delete.idempotent",
            expected="no 5xx",
            actual=f"again: {twice.describe(60)}; unknown: {stranger.describe(60)}",
        )
        if server_error(twice) or server_error(stranger)
        else passed("ors.delete.idempotent", actual=f"again {twice.status}, unknown {stranger.status}")
    )
    finished = await http.post("/delete_session", headers=http.session(sid))
    if 200 <= finished.status < 300:
        gone = passed("ors.delete-session.ok", actual=finished.describe(60))
    elif finished.status == 404:
        gone = info("ors.delete-session.ok", actual=f"404: a server of the older spec ({finished.describe(60)})")
    else:
        gone = missed("ors.delete-session.ok", expected="2xx", actual=finished.describe(60))
    record(ctx.report, [teardown, idempotent, gone], http.transcript)
