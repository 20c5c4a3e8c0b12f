"""Every kind's phases, clauses and options as plain data, read without importing the suites.

`rlconform suites` lists nine kinds; importing each suite with all its phases
(and numpy, websockets, grpc, httpx behind them) takes most of a second. The
listing is therefore also written to `suites_listing.json` beside this
module, stamped with a fingerprint of every source file under `checks/`.
A listing whose fingerprint matches the sources is read as it is; any edit
under `checks/` (or a kind the file does not hold or whose record names another suite, as
tests do)
falls back to importing the suite, so a stale file costs time, never a
wrong listing. `tests/checks/test_listing.py` fails when the file is stale;
rewrite it with

    python -m checks.listing --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checks.registry import RECORDS, find_suite, kind_names

if TYPE_CHECKING:  # the engine (pydantic) loads only when a suite is described, not when a listing is read
    from checks.suite import Suite

LISTING_FILE = Path(__file__).with_name("suites_listing.json")
SOURCES = Path(__file__).resolve().parent
UNAVAILABLE = "unavailable on this server: its optional dependencies are not installed"


def describe_suite(suite: Suite) -> dict[str, Any]:
    """A suite as plain data: what the API's /suites and `rlconform suites --json` show."""
    return {
        "kind": suite.kind,
        "title": suite.title,
        "spec_version": suite.spec_version,
        "url_schemes": list(suite.url_schemes),
        "url_example": suite.url_example,
        "phases": [
            {
                "name": phase.name,
                "description": phase.description,
                "default": phase.default,
                "named_only": phase.named_only,
                "clauses": list(phase.clauses),
            }
            for phase in suite.phases
        ],
        "clauses": [
            {"id": clause.id, "level": str(clause.level), "statement": clause.statement} for clause in suite.catalogue
        ],
        "options_schema": suite.options_model.model_json_schema(),
    }


def option_lines(suite: Suite) -> list[dict[str, str]]:
    """Each option's name, default (as Python spells it, a factory's value included) and description."""
    lines = []
    for name, field in suite.options_model.model_fields.items():
        default = "(required)" if field.is_required() else repr(field.get_default(call_default_factory=True))
        lines.append({"name": name, "default": default, "description": field.description or ""})
    return lines


def listing_entry(kind: str, suite: Suite) -> dict[str, Any]:
    """What the listing file holds for one kind: the document, and what only the text listing shows."""
    return {
        "suite": RECORDS[kind].suite,
        "document": describe_suite(suite),
        "listen": suite.listen,
        "options": option_lines(suite),
    }


def source_fingerprint() -> str:
    """A digest of every Python source under `checks/`, by path and content."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(SOURCES.rglob("*.py")):
        digest.update(path.relative_to(SOURCES).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


@cache
def written_entries() -> dict[str, dict[str, Any]]:
    """The kinds the listing file holds, or none when it is missing, unreadable or older than the sources."""
    try:
        written = json.loads(LISTING_FILE.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(written, dict) or written.get("fingerprint") != source_fingerprint():
        return {}
    kinds = written.get("kinds")
    return kinds if isinstance(kinds, dict) else {}


def entry_of(kind: str) -> dict[str, Any] | None:
    """One kind's listing entry, from the file when it is current, else from the suite; None: unavailable."""
    written = written_entries().get(kind)
    if written is not None and kind in RECORDS and written.get("suite") == RECORDS[kind].suite:
        return written
    suite = find_suite(kind)
    return None if suite is None else listing_entry(kind, suite)


def entries(kinds: Iterable[str] | None = None) -> dict[str, dict[str, Any] | None]:
    """The listing entry of every kind (or of `kinds`, full names), None for an unavailable one."""
    return {kind: entry_of(kind) for kind in (kind_names() if kinds is None else kinds)}


def suites_document(kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every kind (or those of `kinds`, full names) described, or marked unavailable."""
    return [
        {"kind": kind, "unavailable": UNAVAILABLE} if entry is None else entry["document"]
        for kind, entry in entries(kinds).items()
    ]


def current_listing() -> dict[str, Any]:
    """The listing file's content for the sources as they are, every suite imported."""
    kinds: dict[str, Any] = {}
    for kind in kind_names():
        suite = find_suite(kind)
        if suite is not None:  # a kind unavailable here is left out, so it is loaded (and reported) where used
            kinds[kind] = listing_entry(kind, suite)
    return {"fingerprint": source_fingerprint(), "kinds": kinds}


def render(listing: dict[str, Any]) -> str:
    return json.dumps(listing, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="check or rewrite checks/suites_listing.json")
    parser.add_argument("--write", action="store_true", help="rewrite the file from the suites as they are")
    args = parser.parse_args(argv)
    fresh = render(current_listing())
    if args.write:
        LISTING_FILE.write_text(fresh)
        print(f"wrote {LISTING_FILE}")
        return 0
    stale = not LISTING_FILE.is_file() or LISTING_FILE.read_text() != fresh
    print(f"{LISTING_FILE} is {'stale: run python -m checks.listing --write' if stale else 'current'}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
