"""`rlconform reference-client KIND URL`: a conforming client for a listen-mode run to grade."""

from __future__ import annotations

import argparse

from app.cli.common import run_peer
from checks.registry import kinds_with, spelled


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "reference-client", help="run a conforming client against a listen-mode run (flags after KIND go to it)"
    )
    having = ", ".join(spelled(kind) for kind in kinds_with("reference_client"))
    parser.add_argument("kind", help=f"one of: {having}")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="URL and the client's own flags")
    parser.set_defaults(handler=cmd_reference_client)


def cmd_reference_client(args: argparse.Namespace) -> int:
    return run_peer(args.kind, "reference_client", args.rest)
