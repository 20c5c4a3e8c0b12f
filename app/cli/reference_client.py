"""`rlconform reference-client KIND URL`: a conforming client for a listen-mode run to grade."""

from __future__ import annotations

import argparse
import importlib

from app.cli.common import UsageError

# kind -> "module:function" taking argv (the URL first); each parses its own flags.
REFERENCE_CLIENTS = {
    "plugrl": "checks.plugrl_client.reference:main",
    "rllink": "checks.rllink_client.reference:main",
}


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reference-client", help="run a conforming client against a listen-mode run (flags after KIND go to it)"
    )
    parser.add_argument("kind", help=f"one of: {', '.join(REFERENCE_CLIENTS)}")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="URL and the client's own flags")
    parser.set_defaults(handler=cmd_reference_client)


def cmd_reference_client(args: argparse.Namespace) -> int:
    if args.kind not in REFERENCE_CLIENTS:
        raise UsageError(f"no reference client for {args.kind!r}; there are: {', '.join(REFERENCE_CLIENTS)}")
    module_name, function = REFERENCE_CLIENTS[args.kind].split(":")
    exit_code: int | None = getattr(importlib.import_module(module_name), function)(args.rest)
    return exit_code or 0
