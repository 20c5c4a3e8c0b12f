"""Suites described as plain data, for the API, the CLI and the target form (`checks.listing` builds it)."""

from __future__ import annotations

from checks.listing import UNAVAILABLE, describe_suite, suites_document

__all__ = ["UNAVAILABLE", "describe_suite", "suites_document"]
