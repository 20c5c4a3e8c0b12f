"""`rlconform suites`: every kind's phases, clauses and options, read from `checks.listing` without running a suite."""

from __future__ import annotations

import argparse
import json
from typing import Any

from app.cli.common import kinds_named
from checks.listing import entries, suites_document
from checks.registry import kind_names


def cmd_suites(args: argparse.Namespace) -> int:
    kinds = kinds_named(args.kind) if args.kind else kind_names()
    if args.json:
        print(json.dumps(suites_document(kinds), indent=2))
        return 0
    for kind, entry in entries(kinds).items():
        if entry is None:
            print(f"{kind}: unavailable (its optional dependencies are not installed)\n")
        else:
            print_kind(entry)
    return 0


def print_kind(entry: dict[str, Any]) -> None:
    document = entry["document"]
    schemes = ", ".join(f"{scheme}://" for scheme in document["url_schemes"]) or "HOST:PORT"
    where = "listens for the client it grades (--listen HOST:PORT)" if entry["listen"] else f"targets {schemes}"
    print(f"{document['kind']}: {document['title']} (spec version {document['spec_version']}; {where})")
    clauses = {clause["id"]: clause for clause in document["clauses"]}
    for phase in document["phases"]:
        flag = "" if phase["default"] else (" (only when named)" if phase["named_only"] else " (opt-in)")
        print(f"  phase {phase['name']}{flag}: {phase['description']}")
        for clause_id in phase["clauses"]:
            clause = clauses[clause_id]
            print(f"    {clause['level']:<6} {clause['id']}  {clause['statement']}")
    print("  options:")
    for option in entry["options"]:
        print(f"    {option['name']} = {option['default']}  {option['description']}")
    print()
