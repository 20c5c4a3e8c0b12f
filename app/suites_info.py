"""Suites described as plain data, for the API, the CLI and the target form."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checks.core import Suite
from checks.registry import find_suite, kind_names

UNAVAILABLE = "unavailable on this server: its optional dependencies are not installed"


def describe_suite(suite: Suite) -> dict[str, Any]:
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


def suites_document(kinds: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Every kind (or those of `kinds`, full names) described, or marked unavailable."""
    document = []
    for kind in kind_names() if kinds is None else kinds:
        suite = find_suite(kind)
        document.append(describe_suite(suite) if suite is not None else {"kind": kind, "unavailable": UNAVAILABLE})
    return document
