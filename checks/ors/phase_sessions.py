"""HTTP API > Sessions; Sessions > 1-5: ids, /create, the session header, prompt, ping and delete."""

from __future__ import annotations

import uuid

from checks.decision import record
from checks.ors.judging import (
    judge_create,
    judge_create_duplicate,
    judge_create_sessions,
    judge_delete_idempotent,
    judge_delete_session,
    judge_id_header,
    judge_one_source,
    judge_ping,
    judge_prompt,
    judge_setup_blocking,
    judge_teardown,
    judge_unknown_sid,
    note_client_minted,
)
from checks.ors.options import Ctx
from checks.ors.routes import OrsClient, client, learn
from checks.ors.stream import sid_of

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
    async with client(ctx, "sessions") as http:
        await learn(ctx, http)
        answers = [await http.create_session() for _ in range(ctx.options.creates)]
        record(ctx.report, judge_create_sessions(answers), http.transcript)
        sid = next((sid for sid, _ in map(sid_of, answers) if sid), None) or str(uuid.uuid4())
        await _create(ctx, http, sid)
        await _header_and_unknown(ctx, http, sid)
        await _delete(ctx, http, sid)


async def _create(ctx: Ctx, http: OrsClient, sid: str) -> None:
    source = {"env_name": http.env, "split": ctx.state.split, "index": 0}
    created = await http.create(sid, source)
    prompt = await http.prompt(sid)
    decisions = [judge_create(sid, created), judge_setup_blocking(prompt), judge_prompt(prompt)]
    decisions.append(judge_create_duplicate(await http.create(sid, source)))
    both = await http.create(str(uuid.uuid4()), {**source, "task_spec": {"zz": 1}})
    neither = await http.create(str(uuid.uuid4()), {"env_name": http.env})
    decisions.append(judge_one_source(both, neither))
    minted = f"rlconform-{uuid.uuid4().hex}"
    own = await http.create(minted, source)
    decisions.append(note_client_minted(own))
    if own.status == 200:
        await http.delete(minted)
    record(ctx.report, decisions, http.transcript)


async def _header_and_unknown(ctx: Ctx, http: OrsClient, sid: str) -> None:
    body = {"name": ctx.state.tool or next(iter(ctx.state.tools), "zz"), "input": {}}
    headless = {
        "/create": await http.create(None, {"env_name": http.env, "split": ctx.state.split, "index": 0}),
        "/prompt": await http.prompt(None),
        "/call": (await http.call(None, body))[0],
        "/ping": await http.ping(None),
        "/delete": await http.delete(None),
    }
    never = f"zz-never-created-{uuid.uuid4().hex}"
    unknown = {
        "/prompt": await http.prompt(never),
        "/ping": await http.ping(never),
        "/call": (await http.call(never, body))[0],
    }
    pong = await http.ping(sid)
    record(ctx.report, [judge_id_header(headless), judge_unknown_sid(unknown), judge_ping(pong)], http.transcript)


async def _delete(ctx: Ctx, http: OrsClient, sid: str) -> None:
    deleted = await http.delete(sid)
    after = {"/prompt": await http.prompt(sid), "/ping": await http.ping(sid)}
    after["/call"] = (await http.call(sid, {"name": ctx.state.tool or next(iter(ctx.state.tools), "zz"), "input": {}}))[
        0
    ]
    twice, stranger = await http.delete(sid), await http.delete(f"zz-{uuid.uuid4().hex}")
    finished = await http.post("/delete_session", headers=http.session(sid))
    decisions = [
        judge_teardown(after, deleted),
        judge_delete_idempotent(twice, stranger),
        judge_delete_session(finished),
    ]
    record(ctx.report, decisions, http.transcript)
