"""Reading a judge's decision in a test: True passed, False missed, None informational, else its outcome."""

from __future__ import annotations

from checks.decision import Decision

HELD = {"pass": True, "miss": False, "info": None}


def held(decision: Decision) -> bool | str | None:
    """True, False or None for pass, miss and info; the outcome itself ("unsupported", "error") otherwise."""
    return HELD.get(decision.outcome, decision.outcome)


def outcomes(decisions: list[Decision]) -> dict[str, str]:
    """Each clause's worst outcome over the decisions (a miss beats a pass)."""
    rank = {"pass": 0, "info": 1, "unsupported": 1, "error": 2, "miss": 3}
    worst: dict[str, str] = {}
    for decision in decisions:
        if rank[decision.outcome] >= rank.get(worst.get(decision.clause_id, "pass"), 0):
            worst[decision.clause_id] = decision.outcome
    return worst
