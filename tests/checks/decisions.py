"""Reading a judge's decision in a test: True passed, False missed, None informational, else its outcome."""

from __future__ import annotations

from checks.decision import Decision

HELD = {"pass": True, "miss": False, "info": None}


def held(decision: Decision) -> bool | str | None:
    """True, False or None for pass, miss and info; the outcome itself ("unsupported", "error") otherwise."""
    return HELD.get(decision.outcome, decision.outcome)
