"""The one shape of a zoo entry: what to start, and the clause its suite must flag.

Every kind's `tests/zoo/<kind>/catalogue.py` maps an entry's name to one of
these (or a subclass adding what that kind's tests need to run it).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ZooEntry:
    """One broken peer and how its suite must see it."""

    start: Any  # how to start it: a server class or factory, an app factory, a client class, a fault or env name
    clause: str  # the clause the suite must flag (fail for MUST, warn for SHOULD)
    _: KW_ONLY
    knock_on: frozenset[str] = frozenset()  # other clauses the same fault may also flag
    options: dict[str, Any] = field(default_factory=dict)  # suite options over the tests' quick ones
    phases: tuple[str, ...] | None = None  # None: every default phase
    may_error: bool = False  # the fault stops phases early, leaving some clauses `error`
