"""The ORS routes over the one recorded HTTP client, and the per-run facts the phases share.

Every request is written into the phase's transcript; a call's SSE body is
read whole (or cut by `until`) and parsed by `judging.parse_stream`.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from checks.errors import PhaseStopped
from checks.http_client import HttpClient, Reply
from checks.ors.inputs import plain_input
from checks.ors.options import Ctx, OrsState
from checks.ors.stream import OrsStream, parse_stream, sid_of
from checks.task_index import first_split

SPLITS_TRIED = 4  # listed splits asked for a task count at most


class OrsClient(HttpClient):
    """One ORS server; `env` is the environment the session routes are prefixed with."""

    env: str = ""

    def session(self, sid: str | None) -> dict[str, str]:
        return {"X-Session-ID": sid} if sid is not None else {}

    async def create_session(self) -> Reply:
        return await self.post("/create_session")

    async def new_sid(self) -> str:
        """An id from /create_session, or one made here when the server gives none (the spec lets any be sent)."""
        sid, _ = sid_of(await self.create_session())
        return sid or str(uuid.uuid4())

    async def create(self, sid: str | None, body: Any) -> Reply:
        return await self.post("/create", body, headers=self.session(sid))

    async def prompt(self, sid: str | None) -> Reply:
        return await self.get(f"/{self.env}/prompt", headers=self.session(sid))

    async def ping(self, sid: str | None) -> Reply:
        return await self.post("/ping", headers=self.session(sid))

    async def delete(self, sid: str | None) -> Reply:
        return await self.post("/delete", headers=self.session(sid))

    async def call(
        self, sid: str | None, body: Any, until: Callable[[bytes], bool] | None = None, *, raising: bool = False
    ) -> tuple[Reply, OrsStream]:
        """The answer and its events; with `raising`, no usable answer raises (the error family says why)
        instead of coming back as a status-0 reply."""
        headers = {**self.session(sid), "Accept": "application/json"}
        send = self.exchange if raising else self.request
        reply = await send("POST", f"/{self.env}/call", body, headers=headers, until=until)
        return reply, parse_stream(reply.text)

    async def episode(self, ctx: Ctx) -> str:
        """A session created on the run's split, task 0; PhaseStopped when /create refuses it."""
        sid = await self.new_sid()
        created = await self.create(sid, {"env_name": self.env, "split": ctx.state.split, "index": 0})
        if created.status != 200:
            raise PhaseStopped(f"/create refused a session: {created.describe(120)}", self.transcript)
        return sid


@contextlib.asynccontextmanager
async def client(ctx: Ctx, label: str) -> AsyncIterator[OrsClient]:
    """The run's one client (made on first use, closed by `close_state`) with a new transcript for this phase.

    One client for the whole run: making an httpx client builds a TLS context, which costs more than
    a phase's requests against a local server."""
    if ctx.state.http is None:
        ctx.state.http = OrsClient(ctx.url, ctx.report.transcript(label), ctx.timeout, ctx.options, ensure_ascii=False)
    http = ctx.state.http
    http.transcript, http.timeout, http.env = ctx.report.transcript(label), ctx.timeout, ctx.state.env or ""
    yield http


async def close_state(state: OrsState) -> None:
    if state.http is not None:
        await state.http.close()
        state.http = None


async def learn(ctx: Ctx, http: OrsClient) -> None:
    """Fill the run's env, tools and split from the options, else from discovery (once per run)."""
    if ctx.state.env is None:
        listed = await http.get("/list_environments")
        names = listed.body if isinstance(listed.body, list) else []
        ctx.state.env = ctx.options.env or next((n for n in names if isinstance(n, str)), None)
        if ctx.state.env is None:
            raise PhaseStopped(f"no environment to drive: {listed.describe(120)}", http.transcript)
    http.env = ctx.state.env
    if not ctx.state.tools:
        tools = await http.get(f"/{http.env}/tools")
        specs = tools.body.get("tools") if isinstance(tools.body, dict) else None
        for spec in specs if isinstance(specs, list) else []:
            if isinstance(spec, dict) and isinstance(spec.get("name"), str):
                ctx.state.tools[spec["name"]] = spec
    if ctx.state.split is None:
        splits = await http.get(f"/{http.env}/splits")
        ctx.state.split = ctx.options.split or await _split_with_tasks(http, splits.body) or first_split(splits.body)
        if ctx.state.split is None:
            raise PhaseStopped(f"no split to run a task of: {splits.describe(120)}", http.transcript)


async def _split_with_tasks(http: OrsClient, listed: Any) -> str | None:
    """The first listed split /num_tasks counts a task in (sessions run its task 0), or None."""
    names = [split.get("name") for split in listed if isinstance(split, dict)] if isinstance(listed, list) else []
    for name in [name for name in names if isinstance(name, str)][:SPLITS_TRIED]:
        count = await http.post(f"/{http.env}/num_tasks", {"split": name})
        if (
            isinstance(count.body, dict)
            and isinstance(count.body.get("num_tasks"), int)
            and count.body["num_tasks"] > 0
        ):
            return name
    return None


def tool_call(ctx: Ctx, name: str | None, given: dict[str, Any] | None) -> dict[str, Any] | None:
    """A /call body for tool `name` (None: the run's tool) with `given` input, else one made from its schema."""
    name = name or ctx.options.tool or ctx.state.tool or next(iter(ctx.state.tools), None)
    if name is None:
        return None
    schema = ctx.state.tools.get(name, {}).get("input_schema")
    return {"name": name, "input": given if given is not None else plain_input(schema)}
