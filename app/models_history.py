"""API shapes of a target's history and of run diffs (re-exported by `app.models`)."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import SQLModel

from app.run_status import RunStatus
from checks.core import Outcome, Verdict


class RunSummary(SQLModel):
    """A run as history and diffs show it."""

    id: int
    status: RunStatus
    outcome: Outcome | None
    harness_version: str
    spec_version: str
    trigger: str
    created_at: datetime
    finished_at: datetime | None
    # What differs from the previous run (URL, options, phases, harness, spec): verdict changes here are not flakes.
    config_changes: list[str] = []


class HistoryCell(SQLModel):
    """A clause's worst verdict in one run (None: not decided there), and the phase deciding it."""

    run_id: int
    verdict: Verdict | None
    phase: str | None
    transition: bool


class ClauseHistory(SQLModel):
    clause_id: str
    level: str
    flaky: bool
    transitions: int
    cells: list[HistoryCell]


class TrendPoint(SQLModel):
    run_id: int
    passed: int = 0
    failing: int = 0
    decided: int = 0


class TargetHistory(SQLModel):
    """The clauses x recent runs grid of a target, oldest run first."""

    target: str
    kind: str
    runs: list[RunSummary]
    clauses: list[ClauseHistory]
    flaky: list[str]
    trend: list[TrendPoint]
    older: int | None = None  # pass as `before_id` for the page of older runs; None: this is the oldest page


class DiffEntry(SQLModel):
    clause_id: str
    level: str | None
    base: Verdict | None
    head: Verdict | None
    base_phase: str | None
    head_phase: str | None


class DiffCounts(SQLModel):
    newly_failing: int
    newly_passing: int
    changed: int
    added: int
    removed: int
    unchanged: int


class RunDiff(SQLModel):
    """What changed from `base` to `head`, one entry per clause rolled up across phases."""

    base: RunSummary
    head: RunSummary
    newly_failing: list[DiffEntry]
    newly_passing: list[DiffEntry]
    changed: list[DiffEntry]
    added: list[DiffEntry]
    removed: list[DiffEntry]
    counts: DiffCounts
    config_changes: list[str] = []  # what differs between the two runs' configuration
