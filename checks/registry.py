"""Target kinds and their suites, imported only when asked for.

A kind whose optional dependencies are missing stays listed but raises a
clear error when used, so one missing package never hides the others.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Protocol

from checks.core import Suite

# kind -> "module:attribute" of its Suite
KINDS: dict[str, str] = {
    "plugrl-server": "checks.plugrl.suite:SUITE",
    "openenv": "checks.openenv.suite:SUITE",
    "rlmesh": "checks.rlmesh.suite:SUITE",
    "rllink": "checks.rllink.suite:SUITE",
    "openai-chat": "checks.openai.suite:SUITE",
    "session-server": "checks.session.suite:SUITE",
    "plugrl-client": "checks.plugrl_client.suite:SUITE",
    "rllink-client": "checks.rllink_client.suite:SUITE",
}


class UnknownKind(KeyError):
    def __str__(self) -> str:
        return f"unknown target kind {self.args[0]!r}; known kinds: {', '.join(KINDS)}"


@cache
def get_suite(kind: str) -> Suite:
    if kind not in KINDS:
        raise UnknownKind(kind)
    module_name, attribute = KINDS[kind].split(":")
    suite = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(suite, Suite):
        raise TypeError(f"{KINDS[kind]} is not a Suite")
    return suite


def find_suite(kind: str) -> Suite | None:
    """The suite of `kind`, or None when the kind is unknown or its optional dependencies are missing."""
    try:
        return get_suite(kind)
    except (UnknownKind, ImportError):
        return None


class RunningServer(Protocol):
    """An in-process server started by a `DEMO_SERVERS` entry."""

    @property
    def url(self) -> str: ...

    async def close(self) -> None: ...


# kind -> "module:function" of the kind's in-process reference server, which the service runs
# and registers as a demo target: an async `start(host, port)` returning a RunningServer
# (port 0 takes a free one). A suite with a reference server adds its line here.
DEMO_SERVERS: dict[str, str] = {
    "plugrl-server": "checks.plugrl.reference:start_reference_server",
    "rllink": "checks.rllink.reference:start_demo_server",
    "openai-chat": "checks.openai.reference:start_reference_server",
    "session-server": "checks.session.reference:start_reference_server",
}


async def start_demo_server(kind: str, host: str = "127.0.0.1") -> RunningServer:
    """Start the reference server of `kind` on a free port of `host` (ImportError: its package is missing)."""
    module_name, attribute = DEMO_SERVERS[kind].split(":")
    start = getattr(importlib.import_module(module_name), attribute)
    server: RunningServer = await start(host, 0)
    return server
