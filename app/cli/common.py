"""What every `rlconform` command shares: the usage error, kind names and KEY=VALUE option pairs."""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable
from typing import Any

from app.errors import ServiceError
from checks.registry import AmbiguousKind, KindRecord, PeerMain, find_record, peer_main

# Each command's handler is imported only when that command runs, so `rlconform check` or
# `suites` never loads the web stack (FastAPI, SQLAlchemy, procrastinate) and `--help` loads no suite.
Handler = Callable[[argparse.Namespace], int]


def lazy(reference: str) -> Handler:
    """The handler "module:function", imported when it is called."""
    module_name, _, name = reference.partition(":")

    def handler(args: argparse.Namespace) -> int:
        function: Handler = getattr(importlib.import_module(module_name), name)
        return function(args)

    return handler


class UsageError(ServiceError):
    """Bad command-line input; printed without a traceback, exit 2."""


def parse_option_pairs(pairs: list[str]) -> dict[str, Any]:
    """KEY=VALUE strings into a dict; VALUE is read as JSON when it parses, else kept as text."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--option takes KEY=VALUE, got {pair!r}")
        try:
            values[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            values[key.strip()] = raw
    return values


def kind_record(name: str, part: str | None = None) -> KindRecord:
    """The kind `name` (a full or short name) means, for a command needing `part`; a usage error when none."""
    try:
        return find_record(name, part)
    except LookupError as exc:  # UnknownKind, MissingPart, AmbiguousKind: each says what there is
        raise UsageError(str(exc)) from None


def kinds_named(names: list[str]) -> list[str]:
    """The full names `names` mean, where a short name shared by kinds means them all (for listings)."""
    found: list[str] = []
    for name in names:
        try:
            found.append(find_record(name).name)
        except AmbiguousKind as exc:
            found += exc.kinds
        except LookupError as exc:
            raise UsageError(str(exc)) from None
    return list(dict.fromkeys(found))


def run_peer(name: str, part: str, argv: list[str]) -> int:
    """Run the reference server or client (`part`) of the kind `name` with its own flags `argv`."""
    record = kind_record(name, part)
    main: PeerMain = peer_main(record.name, part)
    return main(argv) or 0
