"""The embedded demo: each kind's in-process reference server (each kind record's `demo_server`) as a target.

A newcomer's first `rlconform serve` on an empty database shows one target
per such kind, each of which passes. Later starts serve each on the port it
had before, so its URL (and the target's configuration) stays the same; only
when that port is taken is the target pointed at a new one. A user's own
target of the same name is never touched: ours have the kind and the
description the demo gave them.

The servers are the service's own, on loopback: the runner lets runs reach
them whatever `RLCONFORM_ALLOWED_NETWORKS` says (`Runner.allow_own`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app import crud
from app.models import Target, TargetCreate, utcnow
from checks.registry import RunningServer, demo_kinds, find_suite, load_part, start_demo_server

log = logging.getLogger("rlconform.demo")

DEMO_NAME = "demo"
DEMO_HOST = "127.0.0.1"
# The port of a stored demo URL: ws://127.0.0.1:PORT/..., or rlmesh's bare 127.0.0.1:PORT.
PORT = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?[^/]*:(\d+)(?:/|$)")
# The demo's description before there was one demo target per kind; targets stored with it stay ours.
LEGACY_DESCRIPTION = "The built-in reference PlugRL training server, started with the service. It should pass."


def demo_name(kind: str) -> str:
    # The PlugRL demo predates the others and keeps its name, so existing databases keep their history.
    return DEMO_NAME if kind == "plugrl-server" else f"{DEMO_NAME}-{kind}"


def demo_description(kind: str) -> str:
    suite = find_suite(kind)
    title = suite.title if suite is not None else kind
    return f"The built-in reference server ({title}), started with the service. It should pass."


def _is_ours(target: Target, kind: str) -> bool:
    return target.kind == kind and target.description in (demo_description(kind), LEGACY_DESCRIPTION)


def _plan(engine: Engine, kinds: Iterable[str]) -> list[str]:
    """The kinds whose demo target to create or update.

    Demo targets are created only while the database holds nothing but demo
    targets (a first start, or a later one after a new kind got a demo); an
    existing demo target of ours is repointed; a user's target is left alone.
    """
    kinds = list(kinds)
    with Session(engine) as session:
        names = {demo_name(kind): kind for kind in kinds}
        targets = session.exec(select(Target)).all()
        ours = {target.name for target in targets if target.name in names and _is_ours(target, names[target.name])}
        only_demos = all(target.name in ours for target in targets)
        taken = {target.name for target in targets}
        return [kind for kind in kinds if demo_name(kind) in ours or (only_demos and demo_name(kind) not in taken)]


def _register(engine: Engine, kind: str, url: str, options: dict[str, Any]) -> None:
    name = demo_name(kind)
    with Session(engine) as session:
        existing = session.exec(select(Target).where(col(Target.name) == name)).first()
        if existing is None:
            crud.create_target(
                session,
                TargetCreate(name=name, kind=kind, url=url, description=demo_description(kind), options=options),
                allowed_networks=(),  # the service's own loopback server
            )
        elif _is_ours(existing, kind):
            existing.url = url
            existing.description = demo_description(kind)
            existing.updated_at = utcnow()
            session.add(existing)
            session.commit()


def _previous_port(engine: Engine, kind: str) -> int:
    """The port our demo target of `kind` had last time (0: none), so a restart keeps its URL."""
    with Session(engine) as session:
        target = session.exec(select(Target).where(col(Target.name) == demo_name(kind))).first()
    found = PORT.search(target.url) if target is not None and _is_ours(target, kind) else None
    return int(found.group(1)) if found else 0


async def _start_on_previous_port(kind: str, port: int) -> RunningServer:
    """The demo server on the port it had before, or on a free one when that port is taken now."""
    if port:
        start = load_part(kind, "demo_server")
        if not callable(start):
            raise TypeError(f"the demo server of {kind} is not callable")
        try:
            server: RunningServer = await start(DEMO_HOST, port)
            return server
        except (OSError, RuntimeError) as exc:  # grpc reports a taken port as RuntimeError
            log.info("demo target %r cannot have port %d again (%s); it takes a new one", demo_name(kind), port, exc)
    return await start_demo_server(kind, DEMO_HOST)


async def start_demo(engine: Engine) -> dict[str, RunningServer]:
    """Start and register the demo servers; returns target name -> server (call `close()` on each)."""
    servers: dict[str, RunningServer] = {}
    for kind in await asyncio.to_thread(_plan, engine, demo_kinds()):
        try:
            port = await asyncio.to_thread(_previous_port, engine, kind)
            server = await _start_on_previous_port(kind, port)
        except ImportError as exc:
            log.warning("no demo target for %s: %s", kind, exc)
            continue
        try:
            options = getattr(server, "demo_options", {})  # a demo server may ask for quicker options
            await asyncio.to_thread(_register, engine, kind, server.url, options)
        except Exception:
            await server.close()
            await close_demo(servers)
            raise
        servers[demo_name(kind)] = server
        log.info("demo target %r serves at %s", demo_name(kind), server.url)
    return servers


async def close_demo(servers: dict[str, RunningServer]) -> None:
    for server in servers.values():
        await server.close()
