"""Target strings made safe for the database and for XML, without hiding what the target sent.

A target may put any code point into a close reason, an error text or a
JSON string: a lone surrogate (`"\\ud800"` in JSON) cannot be encoded as
UTF-8 for SQLite, PostgreSQL refuses NUL in text, and XML 1.0 forbids most
control characters. Such characters are written as visible escapes
(`\\x00`, `\\ud800`) so the evidence still shows them.
"""

from __future__ import annotations

import json
import re
from typing import Any

from checks.evidence import visible_escape
from checks.formats import NOT_XML

# NUL and lone surrogates: what a database text column cannot hold.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _map_strings(data: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(data, str):
        return pattern.sub(visible_escape, data)
    if isinstance(data, dict):
        return {_map_strings(key, pattern): _map_strings(value, pattern) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [_map_strings(value, pattern) for value in data]
    return data


def unstorable_paths(data: Any, path: tuple[str | int, ...] = ()) -> list[list[str | int]]:
    """The field path of every string in `data` that a database cannot hold; a bad key ends in `(key)`."""
    if isinstance(data, str):
        return [list(path)] if UNSTORABLE.search(data) else []
    if isinstance(data, dict):
        found: list[list[str | int]] = []
        for key, value in data.items():
            found += unstorable_paths(key, (*path, "(key)")) + unstorable_paths(value, (*path, str(key)))
        return found
    if isinstance(data, (list, tuple)):
        return [loc for index, value in enumerate(data) for loc in unstorable_paths(value, (*path, index))]
    return []


def _compact_json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _storable_text(text: str) -> bool:
    """Whether JSON text holds no NUL and no lone surrogate: json escapes a NUL (a backslash and "u0000"
    in a string matches too, which costs only a walk) and keeps a lone surrogate, which UTF-8 cannot encode."""
    try:
        return "\\u0000" not in text and bool(text.encode())
    except UnicodeEncodeError:
        return False


def storable(data: Any) -> Any:
    """`data` (str, dict, list) with NUL and lone surrogates escaped in every string and key.

    Almost everything a run records is clean: json's C encoder looks at all of it at once and the
    walk in Python (a fifth of the service writer's CPU) runs only when something needs escaping.
    """
    if isinstance(data, str):
        return UNSTORABLE.sub(visible_escape, data)
    try:
        clean = _storable_text(_compact_json(data))
    except (TypeError, ValueError):  # not JSON (bytes, a tuple as key): walk it
        clean = False
    return data if clean else _map_strings(data, UNSTORABLE)


def storable_json(data: Any) -> str:
    """Compact JSON text of `storable(data)` (JSON data only), written once when `data` is clean.

    For what is stored as JSON text anyway (a transcript's frames): the text that shows it clean is the one stored.
    """
    text = _compact_json(data)
    return text if _storable_text(text) else _compact_json(_map_strings(data, UNSTORABLE))


def xml_safe(data: Any) -> Any:
    """`data` with every character XML 1.0 forbids escaped in every string and key."""
    return _map_strings(data, NOT_XML)
