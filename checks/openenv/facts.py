"""Fetching the facts a phase needs when no earlier phase of the run learned them, and the action plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checks.http_client import HttpClient
from checks.openenv.action_values import invalid_actions, valid_action
from checks.openenv.episodes import finish
from checks.openenv.http_judging import usable_schema
from checks.openenv.judging_episodes import seed_shown, sent_seed
from checks.openenv.options import Ctx, OpenEnvOptions
from checks.openenv.schemas import is_valid
from checks.openenv.session import open_session


async def load_schema(ctx: Ctx) -> dict[str, Any] | None:
    known = ctx.state
    if not known.schema_fetched:
        async with HttpClient(ctx.url, ctx.report.transcript("GET /schema"), ctx.timeout, ctx.options) as http:
            reply = await http.get("/schema")
        known.schema = usable_schema(reply.body) if reply.status == 200 else None
        known.schema_fetched = True
    return known.schema


async def load_openapi_paths(ctx: Ctx) -> set[str] | None:
    known = ctx.state
    if not known.openapi_fetched:
        async with HttpClient(ctx.url, ctx.report.transcript("GET /openapi.json"), ctx.timeout, ctx.options) as http:
            reply = await http.get("/openapi.json")
        paths = reply.body.get("paths") if isinstance(reply.body, dict) else None
        known.openapi_paths = set(paths) if reply.status == 200 and isinstance(paths, dict) else None
        known.openapi_fetched = True
    return known.openapi_paths


async def seed_applied(ctx: Ctx) -> bool | None:
    """Whether the reset data's seed shows applied: two fresh sessions reset with it give the same first
    observation (None: the reset data sends no seed). Learned by the group phase, else two resets here."""
    known = ctx.state
    if sent_seed(ctx.options.reset) is None:
        return None
    if known.seed_shown is None:
        firsts = []
        for attempt in (1, 2):
            session = await open_session(ctx, f"the reset data's seed in a fresh session ({attempt})")
            try:
                firsts.append(await session.reset(ctx.options.reset))
            finally:
                await finish(session, ctx.timeout)
        known.seed_shown = seed_shown(firsts)
    return known.seed_shown


async def markers_010(ctx: Ctx) -> list[str]:
    """What on the wire shows openenv 0.10 or later (empty: nothing does, so 0.10 features are not judged)."""
    paths = await load_openapi_paths(ctx) or set()
    schema = await load_schema(ctx) or {}
    seen = (
        ("/list_environments path", "/list_environments" in paths),
        ("reset_observation in /schema", "reset_observation" in schema),
    )
    return [marker for marker, shown in seen if shown]


@dataclass(frozen=True)
class ActionPlan:
    """The actions a run replays: valid ones form the scripted episode, invalid ones must be refused."""

    replay: tuple[tuple[str, Any, bool], ...]  # (label, step data, valid by /schema.action)

    @property
    def valid(self) -> list[Any]:
        return [action for _, action, ok in self.replay if ok]

    @property
    def invalid(self) -> list[tuple[str, Any]]:
        return [(label, action) for label, action, ok in self.replay if not ok]


def action_plan(options: OpenEnvOptions, schema: dict[str, Any] | None) -> ActionPlan:
    action_schema = schema.get("action") if schema else None
    if options.actions is not None:
        replay = tuple(
            (f"action {index + 1}", action, action_schema is None or is_valid(action, action_schema))
            for index, action in enumerate(options.actions)
        )
        return ActionPlan(replay)
    if action_schema is None:
        return ActionPlan(())
    base = valid_action(action_schema)
    if base is None:
        return ActionPlan(())
    generated = [("generated valid action", base, True)]
    generated += [(label, action, False) for label, action in invalid_actions(action_schema, base)]
    return ActionPlan(tuple(generated))
