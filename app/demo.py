"""The embedded demo: the reference PlugRL server, in-process, registered as target `demo`.

A newcomer's first `rlconform serve` on an empty database shows a target
that passes. Later starts point the demo target at the new port. A user's
own target called `demo` is never touched: ours is the PlugRL one that still
carries the demo's description.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from app import crud
from app.models import Target, TargetCreate, utcnow
from checks.plugrl.reference import ReferenceServer, start_reference_server

log = logging.getLogger("rlconform.demo")

DEMO_NAME = "demo"
DEMO_KIND = "plugrl-server"
DEMO_DESCRIPTION = "The built-in reference PlugRL training server, started with the service. It should pass."


def _is_ours(target: Target) -> bool:
    return target.kind == DEMO_KIND and target.description == DEMO_DESCRIPTION


def _plan(engine: Engine) -> str:
    """ "create" on an empty database, "update" when our demo target exists, else "skip"."""
    with Session(engine) as session:
        existing = session.exec(select(Target).where(Target.name == DEMO_NAME)).first()
        if existing is not None:
            return "update" if _is_ours(existing) else "skip"
        empty = session.exec(select(func.count()).select_from(Target)).one() == 0
        return "create" if empty else "skip"


def _register(engine: Engine, url: str) -> None:
    with Session(engine) as session:
        existing = session.exec(select(Target).where(Target.name == DEMO_NAME)).first()
        if existing is None:
            crud.create_target(
                session,
                TargetCreate(name=DEMO_NAME, kind=DEMO_KIND, url=url, description=DEMO_DESCRIPTION),
                allowed_networks=(),  # our own loopback server; runs still obey the policy
            )
        elif _is_ours(existing):
            existing.url = url
            existing.updated_at = utcnow()
            session.add(existing)
            session.commit()


async def start_demo(engine: Engine) -> ReferenceServer | None:
    """Start the reference server and register it; returns the server (call `close()`) or None."""
    plan = await asyncio.to_thread(_plan, engine)
    if plan == "skip":
        return None
    server = await start_reference_server("127.0.0.1", 0)
    try:
        await asyncio.to_thread(_register, engine, server.url)
    except Exception:
        await server.close()
        raise
    log.info("demo target %r serves at %s", DEMO_NAME, server.url)
    return server
