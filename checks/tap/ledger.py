"""Verdicts over time: per clause, how many messages were judged and violated it, the first and last
violation with a window of the transcript, and the rolled-up verdict; windows roll over by time or count.

Every kind's judge returns `checks.decision.Decision`s, the same values a suite's phase records, so a
tap's verdicts and a suite's come from one reading of each outcome.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from checks.decision import Decision
from checks.report import Catalogue
from checks.verdicts import MISSED_VERDICT, Gate, Level, Outcome, Verdict, outcome_of

# Lines of the transcript kept before a violation, and lines added after it.
WINDOW_BEFORE = 4
WINDOW_AFTER = 2
NEEDS_ACTIVE_RUN = "needs an active run"
NOT_EXERCISED = "not exercised by the traffic seen"


@dataclass
class Violation:
    at: float  # seconds since the window opened
    expected: str
    actual: str
    window: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"at": round(self.at, 3), "expected": self.expected, "actual": self.actual, "window": self.window}


@dataclass
class Tally:
    """One clause over a window of traffic."""

    clause_id: str
    level: Level
    judged: int = 0
    violated: int = 0
    infos: int = 0
    unsupported: int = 0  # the peer said an optional feature is not offered: neither a pass nor a miss
    errors: int = 0
    first: Violation | None = None
    last: Violation | None = None
    last_error: str = ""
    skip_reason: str = NOT_EXERCISED

    def verdict(self) -> Verdict:
        """A MUST violated once fails; errors outrank passes; nothing judged is `skip` with its reason."""
        if self.violated:
            return MISSED_VERDICT[self.level]
        if self.errors:
            return Verdict.ERROR
        if self.judged > self.infos + self.unsupported:
            return Verdict.PASS
        if self.infos:
            return Verdict.INFO
        if self.unsupported:
            return Verdict.UNSUPPORTED
        return Verdict.SKIP

    def to_dict(self) -> dict[str, Any]:
        return {
            "clause_id": self.clause_id,
            "level": str(self.level),
            "verdict": str(self.verdict()),
            "judged": self.judged,
            "violated": self.violated,
            "errors": self.errors,
            "first_violation": self.first.to_dict() if self.first else None,
            "last_violation": self.last.to_dict() if self.last else None,
            "note": self.last_error or (self.skip_reason if self.verdict() is Verdict.SKIP else ""),
        }


@dataclass
class ConnectionLog:
    """The recent transcript lines of one connection, and the violation windows still taking lines after them."""

    recent: deque[str] = field(default_factory=lambda: deque(maxlen=WINDOW_BEFORE))
    open_windows: list[tuple[list[str], int]] = field(default_factory=list)

    def add(self, line: str) -> None:
        still_open = []
        for window, wanted in self.open_windows:
            window.append(line)
            if wanted > 1:
                still_open.append((window, wanted - 1))
        self.open_windows = still_open
        self.recent.append(line)


class Ledger:
    """What one window of a tap decided. `raised`: clauses a profile makes MUST whatever their catalogue level."""

    def __init__(
        self,
        catalogue: Catalogue,
        active_only: Iterable[str] = (),
        raised: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.clock = clock
        self.opened = clock()
        self.tallies: dict[str, Tally] = {}
        raised_ids = set(raised)
        for clause in catalogue:
            level = Level.MUST if clause.id in raised_ids else clause.level
            self.tallies[clause.id] = Tally(clause.id, level)
        for clause_id in active_only:
            self.tallies[clause_id].skip_reason = NEEDS_ACTIVE_RUN
        self.logs: dict[int, ConnectionLog] = {}
        self.messages = 0  # every message the relay saw
        self.judged_messages = 0
        self.unjudged = 0  # dropped because the judging queue was full
        self.connections = 0
        self.judge_faults: list[str] = []  # a watcher that raised outside a judge (judging went on)

    def log(self, connection: int) -> ConnectionLog:
        return self.logs.setdefault(connection, ConnectionLog())

    def note(self, connection: int, line: str) -> None:
        self.log(connection).add(line)

    def forget(self, connection: int) -> None:
        self.logs.pop(connection, None)

    def decide(self, connection: int, decisions: Iterable[Decision]) -> None:
        for decision in decisions:
            outcome, expected, actual = decision.outcome, decision.expected, decision.actual
            tally = self.tallies.get(decision.clause_id)
            if tally is None:
                continue  # a judge's clause this tap does not report (an active-run clause of a shared judge)
            if outcome == "error":
                tally.errors += 1
                tally.last_error = actual
                continue
            tally.judged += 1
            if outcome == "info":
                tally.infos += 1
            elif outcome == "unsupported":
                tally.unsupported += 1
            elif outcome == "miss":
                self._violated(connection, tally, expected, actual)

    def judge(self, connection: int, clauses: Iterable[str], judge: Callable[[], Iterable[Decision]]) -> bool:
        """Decide what `judge` returns; when it raises, `error` for `clauses` (the traffic untouched) and False."""
        try:
            decisions = list(judge())
        except Exception as exc:
            self.error(clauses, f"the judge raised {exc!r}")
            return False
        self.decide(connection, decisions)
        return True

    def error(self, clauses: Iterable[str], why: str) -> None:
        """A judge raised: `error` for the clauses it decides, the traffic untouched."""
        for clause in clauses:
            if clause in self.tallies:
                self.tallies[clause].errors += 1
                self.tallies[clause].last_error = why

    def _violated(self, connection: int, tally: Tally, expected: str, actual: str) -> None:
        tally.violated += 1
        log = self.log(connection)
        window = [f"connection {connection}", *log.recent]
        violation = Violation(self.clock() - self.opened, expected, actual, window)
        log.open_windows.append((window, WINDOW_AFTER))
        if tally.first is None:
            tally.first = violation
        tally.last = violation

    def verdicts(self) -> list[tuple[str, Verdict]]:
        return [(clause_id, tally.verdict()) for clause_id, tally in self.tallies.items()]

    def outcome(self, gate: Gate = Gate.DEFAULT) -> Outcome:
        return outcome_of(self.verdicts(), gate)

    def elapsed(self) -> float:
        return self.clock() - self.opened

    def to_dict(self) -> dict[str, Any]:
        return {
            "seconds": round(self.elapsed(), 3),
            "connections": self.connections,
            "messages": self.messages,
            "judged_messages": self.judged_messages,
            "unjudged_messages": self.unjudged,
            "outcome": str(self.outcome()),
            "clauses": [tally.to_dict() for tally in self.tallies.values()],
        }


@dataclass
class Rollover:
    """When a window closes: after `seconds` or `messages` (None: never)."""

    seconds: float | None = None
    messages: int | None = None

    def due(self, ledger: Ledger) -> bool:
        if self.seconds is not None and ledger.elapsed() >= self.seconds:
            return True
        return self.messages is not None and ledger.messages >= self.messages


def summary_lines(ledger: Ledger, quiet: bool = False) -> list[str]:
    """The per-clause summary `rlconform tap` prints: verdict, level, id, judged / violated, first violation."""
    # The reason is named only where there is something to explain.
    unjudged = f"{ledger.unjudged} unjudged" + (" (judging queue full)" if ledger.unjudged else "")
    lines = [
        f"{ledger.connections} connections, {ledger.messages} messages in {ledger.elapsed():.1f}s, "
        f"{ledger.judged_messages} judged, {unjudged}"
    ]
    for tally in ledger.tallies.values():
        verdict = tally.verdict()
        if quiet and verdict is Verdict.SKIP:
            continue
        line = f"{verdict:<5} {tally.level:<6} {tally.clause_id}  judged {tally.judged}, violated {tally.violated}"
        if tally.errors:
            line += f", errors {tally.errors}: {tally.last_error}"
        if verdict is Verdict.SKIP:
            line += f"  ({tally.skip_reason})"
        lines.append(line)
        if tally.first is not None:
            first = tally.first
            lines.append(f"      first at {first.at:.3f}s: expected {first.expected}; got {first.actual}")
            lines.extend(f"        | {entry}" for entry in tally.first.window)
    lines.append(f"outcome: {ledger.outcome()}")
    return lines
