"""Parity scripts by target kind, imported only when asked for (a kind's dependencies may be missing)."""

from __future__ import annotations

import importlib
from functools import cache

from checks.parity.script import ParityScript

SCRIPTS: dict[str, str] = {
    "openenv": "checks.parity.script_openenv:SCRIPT",
    "rlmesh": "checks.parity.script_rlmesh:SCRIPT",
    "plugrl-server": "checks.parity.script_plugrl:SCRIPT",
    "session-server": "checks.parity.script_session:SCRIPT",
    "openai-chat": "checks.parity.script_openai:SCRIPT",
}


@cache
def get_script(kind: str) -> ParityScript:
    if kind not in SCRIPTS:
        raise KeyError(f"no parity script for {kind!r}; there are scripts for {', '.join(SCRIPTS)}")
    module_name, attribute = SCRIPTS[kind].split(":")
    script: ParityScript = getattr(importlib.import_module(module_name), attribute)
    return script


def find_script(kind: str) -> ParityScript | None:
    try:
        return get_script(kind)
    except (KeyError, ImportError):
        return None
