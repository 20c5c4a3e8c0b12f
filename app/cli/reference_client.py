"""`rlconform reference-client KIND URL`: a conforming client for a listen-mode run to grade."""

from __future__ import annotations

import argparse

from app.cli.common import run_peer


def cmd_reference_client(args: argparse.Namespace) -> int:
    return run_peer(args.kind, "reference_client", args.rest)
