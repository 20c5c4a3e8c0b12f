"""What every `rlconform` command shares: the usage error and KEY=VALUE option pairs."""

from __future__ import annotations

import json
from typing import Any


class UsageError(Exception):
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
